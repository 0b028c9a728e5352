package provider

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingcrd "github.com/stowage-dev/stowage/controller/apis/autoscaling/crd"
	"github.com/stowage-dev/stowage/controller/apis/crds"
	"github.com/stowage-dev/stowage/controller/deploy"
	"github.com/stowage-dev/stowage/controller/options"
)

// ControllerImage is the controller's image repository; the tag is the
// provider's version and the digest the image index make release built for
// it, so that the controller matches the provider (and the Lambda it embeds)
// byte for byte.
const ControllerImage = "ghcr.io/stowage-dev/stowage"

// roleARNAnnotation is IRSA's: the role the service account's pods assume.
const roleARNAnnotation = "eks.amazonaws.com/role-arn"

var releaseVersion = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`)

var imageDigest = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// defaultImage is the image of the provider's release, pinned by the digest
// make release stamped when there is one; a development build of the
// provider takes the manifests' own (empty here).
func defaultImage(version, digest string) string {
	if !releaseVersion.MatchString(version) {
		return ""
	}
	if imageDigest.MatchString(digest) {
		return ControllerImage + ":v" + version + "@" + digest
	}
	return ControllerImage + ":v" + version
}

// controllerSettings are what stowage_controller sets in the manifests.
type controllerSettings struct {
	ClusterName, ClusterEndpoint, ClusterCABundle, Region string
	ClusterCIDR                                           string
	Image, ImagePullPolicy, RoleARN, LogLevel, LogFormat  string
	Replicas                                              int32
	// Flags are more `stowage run` flags, name (without --) -> value.
	Flags                                  map[string]string
	CPURequest, MemoryRequest, MemoryLimit string
	// Namespace and ServiceAccount replace the manifests' (deploy.Namespace
	// and deploy.ServiceAccount) when set.
	Namespace, ServiceAccount string
}

// namespace is where the objects go: the manifests' unless set.
func (s controllerSettings) namespace() string {
	if s.Namespace == "" {
		return deploy.Namespace
	}
	return s.Namespace
}

func (s controllerSettings) serviceAccount() string {
	if s.ServiceAccount == "" {
		return deploy.ServiceAccount
	}
	return s.ServiceAccount
}

// attributeFlags are the flags attributes set; settings may not set them.
var attributeFlags = map[string]string{
	"cluster-name": "cluster_name", "cluster-endpoint": "cluster_endpoint", "cluster-ca-bundle": "cluster_ca_bundle", "cluster-cidr": "cluster_cidr",
	"region": "region", "log-level": "log_level", "log-format": "log_format",
	"metrics-bind-address": "(fixed: the metrics Service's port)", "health-probe-bind-address": "(fixed: the probes' port)",
	"leader-election-namespace": "(fixed: the namespace's Lease Role)",
}

// args are the container's arguments: run, then the extra flags in order.
func (s controllerSettings) args() []string {
	out := []string{"run"}
	for _, k := range sortedKeys(s.Flags) {
		out = append(out, "--"+k+"="+s.Flags[k])
	}
	return out
}

// env sets the manifests' environment variables the attributes stand for.
func (s controllerSettings) env() map[string]string {
	return map[string]string{"CLUSTER_NAME": s.ClusterName, "CLUSTER_ENDPOINT": s.ClusterEndpoint, "CLUSTER_CA_BUNDLE": s.ClusterCABundle,
		"CLUSTER_CIDR": s.ClusterCIDR, "AWS_REGION": s.Region, "LOG_LEVEL": s.LogLevel, "LOG_FORMAT": s.LogFormat}
}

// validate checks the settings as `stowage run` would read them in the pod,
// each error naming the attribute (or the flag of settings) and the fix.
func (s controllerSettings) validate() map[string]string {
	problems := map[string]string{}
	for k := range s.Flags {
		if attr, ok := attributeFlags[k]; ok {
			problems["settings"] = fmt.Sprintf("%s is set by %s, not settings", k, attr)
		}
	}
	env := s.env()
	env["LEADER_ELECTION_NAMESPACE"] = s.namespace()
	_, err := options.Parse(s.args()[1:], func(k string) string { return env[k] }, io.Discard)
	var joined interface{ Unwrap() []error }
	errs := []error{err}
	if errors.As(err, &joined) {
		errs = joined.Unwrap()
	}
	for _, e := range errs {
		if e == nil {
			continue
		}
		flag, msg, _ := strings.Cut(strings.TrimPrefix(e.Error(), "--"), ": ")
		if attr, ok := attributeFlags[flag]; ok && !strings.HasPrefix(attr, "(") {
			problems[attr] = msg
		} else {
			problems["settings"] = strings.TrimSpace(problems["settings"] + " " + e.Error())
		}
	}
	for attr, msg := range s.validateNames() {
		problems[attr] = msg
	}
	for attr, v := range map[string]string{"cpu_request": s.CPURequest, "memory_request": s.MemoryRequest, "memory_limit": s.MemoryLimit} {
		if _, err := resource.ParseQuantity(v); v != "" && err != nil {
			problems[attr] = fmt.Sprintf("%q is not a quantity: use e.g. 500m or 512Mi", v)
		}
	}
	return problems
}

// validateNames checks the namespace and the service account: the
// namespace is created and deleted with the controller, so it may not be
// one the cluster needs.
func (s controllerSettings) validateNames() map[string]string {
	problems := map[string]string{}
	ns := s.namespace()
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		problems["namespace"] = fmt.Sprintf("%q is not a namespace name: %s", ns, strings.Join(errs, "; "))
	} else if ns == "default" || strings.HasPrefix(ns, "kube-") {
		problems["namespace"] = fmt.Sprintf("%s is deleted with the controller: use a namespace of its own, such as %s or karpenter", ns, deploy.Namespace)
	}
	if errs := validation.IsDNS1123Subdomain(s.serviceAccount()); len(errs) > 0 {
		problems["service_account"] = fmt.Sprintf("%q is not a service account name: %s", s.serviceAccount(), strings.Join(errs, "; "))
	}
	return problems
}

// desiredObjects are the objects the controller's installation consists of,
// in the order they are applied: the CRDs (Stowage's, and the CapacityBuffer
// and ProvisioningRequest CRDs it shares with other autoscalers, labelled as
// installed by it), then controller/deploy's manifests with the settings in
// them.
func desiredObjects(s controllerSettings) ([]*unstructured.Unstructured, error) {
	defs, err := crds.CRDs()
	if err != nil {
		return nil, err
	}
	others, err := autoscalingcrd.Shared()
	if err != nil {
		return nil, err
	}
	for _, d := range others {
		d.Labels = map[string]string{installedByLabel: installedByValue}
		defs = append(defs, d)
	}
	var out []*unstructured.Unstructured
	for _, d := range defs {
		u, err := toUnstructured(d)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	ms, err := deploy.Manifests()
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		obj, _ := m.Object.DeepCopyObject().(client.Object)
		if err := s.applyTo(obj); err != nil {
			return nil, err
		}
		u, err := toUnstructured(obj)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	slices.SortStableFunc(out, func(a, b *unstructured.Unstructured) int { return applyRank(a) - applyRank(b) })
	return out, nil
}

// applyRank orders kinds so that each object's dependencies come first.
func applyRank(u *unstructured.Unstructured) int {
	order := []string{"CustomResourceDefinition", "Namespace", "ServiceAccount", "ClusterRole", "Role", "ClusterRoleBinding",
		"RoleBinding", "Service", "PodDisruptionBudget", "Deployment"}
	return slices.Index(order, u.GetKind())
}

// applyTo writes the settings into one of the manifests' objects: its
// namespace, the service account's name and role, the bindings' subject, the
// Deployment's settings.
func (s controllerSettings) applyTo(obj client.Object) error {
	if obj.GetNamespace() != "" {
		obj.SetNamespace(s.namespace())
	}
	switch o := obj.(type) {
	case *corev1.Namespace:
		o.Name = s.namespace()
	case *rbacv1.ClusterRoleBinding:
		s.bind(o.Subjects)
	case *rbacv1.RoleBinding:
		s.bind(o.Subjects)
	case *corev1.ServiceAccount:
		o.Name = s.serviceAccount()
		delete(o.Annotations, roleARNAnnotation)
		if s.RoleARN != "" {
			if o.Annotations == nil {
				o.Annotations = map[string]string{}
			}
			o.Annotations[roleARNAnnotation] = s.RoleARN
		}
	case *appsv1.Deployment:
		return s.applyToDeployment(o)
	}
	return nil
}

// bind makes the bindings' service account the controller's.
func (s controllerSettings) bind(subjects []rbacv1.Subject) {
	for i := range subjects {
		if subjects[i].Kind == rbacv1.ServiceAccountKind {
			subjects[i].Name, subjects[i].Namespace = s.serviceAccount(), s.namespace()
		}
	}
}

func (s controllerSettings) applyToDeployment(d *appsv1.Deployment) error {
	d.Spec.Replicas = &s.Replicas
	d.Spec.Template.Spec.ServiceAccountName = s.serviceAccount()
	c := &d.Spec.Template.Spec.Containers[0]
	if s.Image != "" {
		c.Image = s.Image
	}
	if s.ImagePullPolicy != "" {
		c.ImagePullPolicy = corev1.PullPolicy(s.ImagePullPolicy)
	}
	c.Args = s.args()
	env := s.env()
	for i, e := range c.Env {
		if v, ok := env[e.Name]; ok {
			c.Env[i].Value = v
		}
	}
	for name, v := range map[corev1.ResourceName]string{corev1.ResourceCPU: s.CPURequest, corev1.ResourceMemory: s.MemoryRequest} {
		if v != "" {
			q, err := resource.ParseQuantity(v)
			if err != nil {
				return err
			}
			c.Resources.Requests[name] = q
		}
	}
	if s.MemoryLimit != "" {
		q, err := resource.ParseQuantity(s.MemoryLimit)
		if err != nil {
			return err
		}
		c.Resources.Limits[corev1.ResourceMemory] = q
	}
	return nil
}

// toUnstructured converts a typed object into the JSON an apply sends, with
// its apiVersion and kind, and without the status and the fields only the
// server sets.
func toUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	gvks, _, err := scheme().ObjectKinds(obj)
	if err != nil || len(gvks) == 0 {
		return nil, fmt.Errorf("finding the kind of %T: %w", obj, err)
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvks[0])
	delete(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "spec", "template", "metadata", "creationTimestamp")
	return u, nil
}

// revision identifies a set of desired objects: a hash of them.
func revision(objs []*unstructured.Unstructured) string {
	h := sha256.New()
	for _, o := range objs {
		b, _ := json.Marshal(o.Object) //nolint:errchkjson // JSON-shaped maps
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// scheme knows the manifests' kinds and the CRDs'.
var scheme = sync.OnceValue(func() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = apiextensionsv1.AddToScheme(s)
	return s
})
