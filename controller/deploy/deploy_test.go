package deploy_test

import (
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/deploy"
	"github.com/stowage-dev/stowage/controller/options"
)

// only returns the single manifest of type T, failing unless there is exactly one.
func only[T client.Object](t *testing.T, ms []deploy.Manifest) T {
	t.Helper()
	var found []T
	for _, m := range ms {
		if o, ok := m.Object.(T); ok {
			found = append(found, o)
		}
	}
	if len(found) != 1 {
		var zero T
		t.Fatalf("%d manifests of type %T, want 1", len(found), zero)
	}
	return found[0]
}

func manifests(t *testing.T) []deploy.Manifest {
	t.Helper()
	ms, err := deploy.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

func TestManifestsDecodeStrictlyIntoTheExpectedObjects(t *testing.T) {
	ms := manifests(t)
	var kinds []string
	for _, m := range ms {
		kinds = append(kinds, fmt.Sprintf("%T", m.Object))
		ns := m.Object.GetNamespace()
		switch m.Object.(type) {
		case *corev1.Namespace, *rbacv1.ClusterRole, *rbacv1.ClusterRoleBinding:
			if ns != "" {
				t.Errorf("%s: cluster-scoped %T has namespace %q", m.File, m.Object, ns)
			}
		default:
			if ns != deploy.Namespace {
				t.Errorf("%s: %T %s is in namespace %q, want %q", m.File, m.Object, m.Object.GetName(), ns, deploy.Namespace)
			}
		}
		if m.Object.GetName() != deploy.Name {
			t.Errorf("%s: %T is named %q, want %q", m.File, m.Object, m.Object.GetName(), deploy.Name)
		}
	}
	slices.Sort(kinds)
	want := []string{"*v1.ClusterRole", "*v1.ClusterRoleBinding", "*v1.Deployment", "*v1.Namespace",
		"*v1.PodDisruptionBudget", "*v1.Role", "*v1.RoleBinding", "*v1.Service", "*v1.ServiceAccount"}
	if !slices.Equal(kinds, want) {
		t.Errorf("manifests hold %v, want %v", kinds, want)
	}
}

func TestServiceAccountIsReadyForIRSAAndPodIdentity(t *testing.T) {
	ms := manifests(t)
	sa := only[*corev1.ServiceAccount](t, ms)
	arn := sa.Annotations["eks.amazonaws.com/role-arn"]
	if !strings.HasPrefix(arn, "arn:aws:iam::") || !strings.Contains(arn, ":role/") {
		t.Errorf("role-arn annotation %q is not an IAM role ARN placeholder", arn)
	}
	if sa.AutomountServiceAccountToken != nil && !*sa.AutomountServiceAccountToken {
		t.Error("the service account disables token mounting: neither IRSA nor Pod Identity can work")
	}
	d := only[*appsv1.Deployment](t, ms)
	if got := d.Spec.Template.Spec.ServiceAccountName; got != deploy.ServiceAccount {
		t.Errorf("deployment runs as %q, want %q", got, deploy.ServiceAccount)
	}
}

func TestBindingsGrantTheRolesToTheServiceAccount(t *testing.T) {
	ms := manifests(t)
	crb := only[*rbacv1.ClusterRoleBinding](t, ms)
	rb := only[*rbacv1.RoleBinding](t, ms)
	want := rbacv1.Subject{Kind: "ServiceAccount", Name: deploy.ServiceAccount, Namespace: deploy.Namespace}
	for _, b := range []struct {
		name     string
		roleRef  rbacv1.RoleRef
		subjects []rbacv1.Subject
		kind     string
	}{{"clusterrolebinding", crb.RoleRef, crb.Subjects, "ClusterRole"}, {"rolebinding", rb.RoleRef, rb.Subjects, "Role"}} {
		if b.roleRef.Kind != b.kind || b.roleRef.Name != deploy.Name {
			t.Errorf("%s refers to %s %s, want %s %s", b.name, b.roleRef.Kind, b.roleRef.Name, b.kind, deploy.Name)
		}
		if !slices.Equal(b.subjects, []rbacv1.Subject{want}) {
			t.Errorf("%s subjects are %v, want %v", b.name, b.subjects, want)
		}
	}
}

// forbidden are verbs and resources a node autoscaler never needs.
var (
	forbiddenVerbs     = []string{"*", "escalate", "bind", "impersonate", "deletecollection"}
	forbiddenResources = []string{"*", "secrets", "configmaps", "serviceaccounts", "serviceaccounts/token", "roles",
		"clusterroles", "rolebindings", "clusterrolebindings", "customresourcedefinitions"}
)

func TestRolesAreLeastPrivilege(t *testing.T) {
	ms := manifests(t)
	cr := only[*rbacv1.ClusterRole](t, ms)
	role := only[*rbacv1.Role](t, ms)
	for _, r := range append(append([]rbacv1.PolicyRule(nil), cr.Rules...), role.Rules...) {
		if slices.Contains(r.APIGroups, "*") || len(r.NonResourceURLs) > 0 || len(r.ResourceNames) > 0 {
			t.Errorf("rule %v uses a wildcard group or non-resource URLs", r)
		}
		for _, v := range forbiddenVerbs {
			if slices.Contains(r.Verbs, v) {
				t.Errorf("rule %v grants %q", r, v)
			}
		}
		for _, res := range forbiddenResources {
			if slices.Contains(r.Resources, res) {
				t.Errorf("rule %v grants access to %q", r, res)
			}
		}
	}
	if grants(cr.Rules, "coordination.k8s.io", "leases", "update") {
		t.Error("the ClusterRole grants leases cluster-wide: the Lease belongs in the namespaced Role only")
	}
	for _, want := range [][3]string{{"coordination.k8s.io", "leases", "get"}, {"coordination.k8s.io", "leases", "create"},
		{"coordination.k8s.io", "leases", "update"}} {
		if !grants(role.Rules, want[0], want[1], want[2]) {
			t.Errorf("the namespaced Role does not grant %s on %s.%s", want[2], want[1], want[0])
		}
	}
	// Writes the controllers make, each through its own marker.
	for _, want := range [][3]string{{"stowage.dev", "nodeclaims", "create"}, {"stowage.dev", "nodeclaims/status", "patch"},
		{"", "pods/eviction", "create"}, {"", "nodes", "patch"}, {"", "nodes", "delete"}, {"events.k8s.io", "events", "create"}} {
		if !grants(cr.Rules, want[0], want[1], want[2]) {
			t.Errorf("the ClusterRole does not grant %s on %s.%s", want[2], want[1], want[0])
		}
	}
	for _, readOnly := range [][2]string{{"stowage.dev", "nodepools"}, {"stowage.dev", "nodeclasses"}, {"apps", "daemonsets"},
		{"policy", "poddisruptionbudgets"}, {"storage.k8s.io", "storageclasses"}, {"scheduling.k8s.io", "priorityclasses"}} {
		for _, v := range []string{"create", "update", "patch", "delete"} {
			if grants(cr.Rules, readOnly[0], readOnly[1], v) {
				t.Errorf("the ClusterRole grants %s on %s.%s, which Stowage only reads", v, readOnly[1], readOnly[0])
			}
		}
	}
}

func grants(rules []rbacv1.PolicyRule, group, resource, verb string) bool {
	for _, r := range rules {
		if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
			return true
		}
	}
	return false
}

func TestDeploymentRunsTwoSpreadReplicas(t *testing.T) {
	ms := manifests(t)
	d := only[*appsv1.Deployment](t, ms)
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
		t.Errorf("replicas = %v, want 2", d.Spec.Replicas)
	}
	podLabels := labels.Set(d.Spec.Template.Labels)
	if sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector); err != nil || !sel.Matches(podLabels) {
		t.Errorf("the deployment's selector %v does not match its pods' labels %v (%v)", d.Spec.Selector, podLabels, err)
	}
	keys := map[string]bool{}
	for _, c := range d.Spec.Template.Spec.TopologySpreadConstraints {
		sel, err := metav1.LabelSelectorAsSelector(c.LabelSelector)
		if err != nil || !sel.Matches(podLabels) {
			t.Errorf("spread over %s selects %v, not the controller's pods (%v)", c.TopologyKey, c.LabelSelector, err)
		}
		if c.MaxSkew != 1 {
			t.Errorf("spread over %s has maxSkew %d, want 1", c.TopologyKey, c.MaxSkew)
		}
		keys[c.TopologyKey] = true
	}
	for _, k := range []string{corev1.LabelTopologyZone, corev1.LabelHostname} {
		if !keys[k] {
			t.Errorf("no topology spread over %s", k)
		}
	}
	pdb := only[*policyv1.PodDisruptionBudget](t, ms)
	if pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() != 1 || pdb.Spec.MaxUnavailable != nil {
		t.Errorf("PDB minAvailable = %v maxUnavailable = %v, want minAvailable 1 alone", pdb.Spec.MinAvailable, pdb.Spec.MaxUnavailable)
	}
	if sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector); err != nil || !sel.Matches(podLabels) {
		t.Errorf("the PDB's selector %v does not match the controller's pods (%v)", pdb.Spec.Selector, err)
	}
}

func TestDeploymentIsNonRootReadOnlyAndConfined(t *testing.T) {
	d := only[*appsv1.Deployment](t, manifests(t))
	pod := d.Spec.Template.Spec
	psc := pod.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.SeccompProfile == nil ||
		psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod security context %+v: want runAsNonRoot and seccomp RuntimeDefault", psc)
	}
	if psc != nil && (psc.RunAsUser == nil || *psc.RunAsUser == 0) {
		t.Error("the pod runs as uid 0 or an unset uid")
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	sc := pod.Containers[0].SecurityContext
	switch {
	case sc == nil:
		t.Fatal("the container has no security context")
	case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
		t.Error("the root filesystem is writable")
	case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
		t.Error("privilege escalation is allowed")
	case sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0:
		t.Errorf("capabilities %+v, want all dropped and none added", sc.Capabilities)
	case sc.Privileged != nil && *sc.Privileged:
		t.Error("the container is privileged")
	case sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault:
		t.Error("the container's seccomp profile is not RuntimeDefault")
	}
}

// TestTheImageIsTheDevelopmentBuildsNeverLatest: the manifests name the
// image `make image` builds from the tree; a release's provider replaces it
// with its own, pinned by digest. A moving tag would run whatever was pushed
// last.
func TestTheImageIsTheDevelopmentBuildsNeverLatest(t *testing.T) {
	d := only[*appsv1.Deployment](t, manifests(t))
	if img := d.Spec.Template.Spec.Containers[0].Image; img != "ghcr.io/stowage-dev/stowage:dev" {
		t.Errorf("the Deployment runs %q, want ghcr.io/stowage-dev/stowage:dev", img)
	}
}

func TestDeploymentProbesAndPortsMatchTheOptions(t *testing.T) {
	d := only[*appsv1.Deployment](t, manifests(t))
	c := d.Spec.Template.Spec.Containers[0]
	if !slices.Equal(c.Args, []string{"run"}) {
		t.Errorf("args = %v, want [run]", c.Args)
	}
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	if ports["http-metrics"] != 8080 || ports["http-health"] != 8081 {
		t.Errorf("container ports %v, want http-metrics 8080 and http-health 8081", ports)
	}
	for _, p := range []struct {
		name  string
		probe *corev1.Probe
		path  string
	}{{"liveness", c.LivenessProbe, "/healthz"}, {"readiness", c.ReadinessProbe, "/readyz"}} {
		if p.probe == nil || p.probe.HTTPGet == nil {
			t.Errorf("no %s HTTP probe", p.name)
			continue
		}
		if got := ports[p.probe.HTTPGet.Port.String()]; p.probe.HTTPGet.Path != p.path || got != 8081 {
			t.Errorf("%s probe GET %s on port %s (%d), want %s on 8081", p.name, p.probe.HTTPGet.Path, p.probe.HTTPGet.Port.String(), got, p.path)
		}
	}
	o := optionsFromEnv(t, c.Env)
	for _, a := range []struct {
		name, addr string
		port       int32
	}{{"metrics", o.MetricsAddr, 8080}, {"health", o.HealthAddr, 8081}} {
		if _, port, err := net.SplitHostPort(a.addr); err != nil || port != fmt.Sprint(a.port) {
			t.Errorf("the %s address %q does not serve the container port %d", a.name, a.addr, a.port)
		}
	}
	if !o.LeaderElect {
		t.Error("leader election is off: two replicas would both act")
	}
}

// optionsFromEnv parses `stowage run`'s options from the container's
// environment alone, as the pod would, failing when a variable is not one
// the options read.
func optionsFromEnv(t *testing.T, env []corev1.EnvVar) *options.Options {
	t.Helper()
	values := map[string]string{}
	for _, e := range env {
		v := e.Value
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace" {
			v = deploy.Namespace
		}
		values[e.Name] = v
	}
	read := map[string]bool{}
	o, err := options.Parse(nil, func(k string) string { read[k] = true; return values[k] }, io.Discard)
	if err != nil {
		t.Fatalf("the deployment's environment does not make valid options: %v", err)
	}
	for name := range values {
		if !read[name] {
			t.Errorf("environment variable %s is not one `stowage run` reads", name)
		}
	}
	if o.LeaderElectionNamespace != deploy.Namespace {
		t.Errorf("leader election namespace %q, want %q (where the Lease Role is)", o.LeaderElectionNamespace, deploy.Namespace)
	}
	return o
}

func TestMetricsServiceReachesEveryReplicasMetricsPort(t *testing.T) {
	ms := manifests(t)
	svc := only[*corev1.Service](t, ms)
	d := only[*appsv1.Deployment](t, ms)
	if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels)) || len(svc.Spec.Selector) == 0 {
		t.Errorf("the service selects %v, not the controller's pods %v", svc.Spec.Selector, d.Spec.Template.Labels)
	}
	if svc.Spec.Type != corev1.ServiceTypeClusterIP || len(svc.Spec.Ports) != 1 {
		t.Fatalf("service type %s with %d ports, want one ClusterIP port", svc.Spec.Type, len(svc.Spec.Ports))
	}
	p := svc.Spec.Ports[0]
	var target *corev1.ContainerPort
	for i, cp := range d.Spec.Template.Spec.Containers[0].Ports {
		if cp.Name == p.TargetPort.String() {
			target = &d.Spec.Template.Spec.Containers[0].Ports[i]
		}
	}
	if p.Name != "http-metrics" || target == nil || target.ContainerPort != 8080 {
		t.Errorf("port %s targets %s (%v), want http-metrics on the container's 8080", p.Name, p.TargetPort.String(), target)
	}
}
