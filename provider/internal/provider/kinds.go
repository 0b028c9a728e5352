package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/stowage-dev/stowage/controller/apis/crds"
	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/provider/internal/crdschema"
	"github.com/stowage-dev/stowage/provider/internal/kube"
)

// kind is one kind served as a Terraform resource: Stowage's cluster-scoped
// kinds, and the namespaced CapacityBuffer of autoscaling.x-k8s.io.
type kind struct {
	typeName    string // after "stowage_"
	kind        string
	plural      string
	description string
	spec        crdschema.Spec
	// apiVersion is the objects'; stowage.dev/v1alpha1 when empty.
	apiVersion string
	// namespaced kinds' objects live in a namespace: a namespace attribute,
	// and namespace/name as id and import id.
	namespaced bool
	// crd is the kind's CRD with the one version the schema is built from;
	// the embedded Stowage CRD of the kind when nil.
	crd func() (*apiextensionsv1.CustomResourceDefinition, error)
	// goValidate runs the API types' Validate (after SetDefaults) on an object's JSON.
	goValidate func(obj map[string]any) (field.ErrorList, error)
	// own are the provider's attributes beyond the object's fields.
	own []*crdschema.Node

	once      sync.Once
	root      *crdschema.Node
	admission *crdschema.Admission
	err       error
}

var nodePoolKind = &kind{
	typeName: "node_pool", kind: "NodePool", plural: "nodepools", spec: crdschema.NodePoolSpec,
	description: "A Stowage NodePool: which instance types, zones and capacity types its nodes may use, how they are " +
		"labelled and tainted, how much it may launch, and when its nodes may be disrupted. Written with server-side apply " +
		"(field manager `terraform-provider-stowage`), and converged: a field the configuration does not set and the API " +
		"server does not default is removed, whoever wrote it. Only `name` forces replacement. A plan warns with the number " +
		"of nodes it drifts, by every check the controller's drift detection makes: what nodes carry for life (labels, " +
		"annotations, taints, node class), and requirements that the running nodes' labels no longer meet. A create refuses " +
		"a NodePool that already exists unless `adopt_existing` is set; a `node_class_ref` to a NodeClass that exists neither " +
		"in the configuration nor in the cluster fails the plan; and a destroy waits until the pool's nodes are drained and " +
		"terminated (up to 15 minutes), so that their NodeClass is deleted after them.",
	goValidate: typedValidate[v1alpha1.NodePool],
	own:        []*crdschema.Node{{Name: "allow_destroy_with_nodes", Kind: crdschema.Bool}, {Name: "adopt_existing", Kind: crdschema.Bool}},
}

var nodeClassKind = &kind{
	typeName: "node_class", kind: "NodeClass", plural: "nodeclasses", spec: crdschema.NodeClassSpec,
	description: "A Stowage NodeClass: the EC2 side of a node (image, subnets, security groups, IAM, disks, metadata " +
		"options, user data, kubelet settings). Written with server-side apply (field manager `terraform-provider-stowage`), " +
		"and converged as a pool is; only `name` forces replacement. A plan warns with the number of nodes it drifts: those " +
		"launched under what nodes fix at launch, and, when the image, subnet or security group selectors change, those " +
		"whose image, subnet or security groups the new selectors no longer select, resolved through the provider's AWS " +
		"settings (ec2:DescribeImages, ssm:GetParameter, ec2:DescribeSubnets, ec2:DescribeSecurityGroups, " +
		"ec2:DescribeInstances); without AWS access the warning says it could not resolve them. A destroy waits until no " +
		"node launched with the class remains.",
	goValidate: typedValidate[v1alpha1.NodeClass],
	own:        []*crdschema.Node{{Name: "adopt_existing", Kind: crdschema.Bool}},
}

// validatable is a v1alpha1 type with defaults and Go validation.
type validatable interface {
	SetDefaults()
	Validate() field.ErrorList
}

func typedValidate[T any, PT interface {
	*T
	validatable
}](obj map[string]any) (field.ErrorList, error) {
	var typed T
	if err := decodeTyped(obj, &typed); err != nil {
		return nil, err
	}
	PT(&typed).SetDefaults()
	return PT(&typed).Validate(), nil
}

func decodeTyped(obj map[string]any, into any) error {
	b, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, into)
}

// load builds the schema tree and compiles the CRD's rules, once.
func (k *kind) load() (*crdschema.Node, *crdschema.Admission, error) {
	k.once.Do(func() {
		find := k.crd
		if find == nil {
			find = func() (*apiextensionsv1.CustomResourceDefinition, error) { return findCRD(k.kind) }
		}
		crd, err := find()
		if err != nil {
			k.err = err
			return
		}
		extra := []*crdschema.Node{
			{Name: "id", Kind: crdschema.String},
			{Name: "name", Kind: crdschema.String, JSON: []string{"metadata", "name"}, Required: true},
		}
		if k.namespaced {
			extra = append(extra, &crdschema.Node{Name: "namespace", Kind: crdschema.String, JSON: []string{"metadata", "namespace"}, Required: true})
		}
		if k.root, k.err = crdschema.Build(crd, k.spec, append(extra, k.own...)...); k.err != nil {
			return
		}
		k.admission, k.err = crdschema.NewAdmission(crd)
	})
	return k.root, k.admission, k.err
}

func findCRD(kind string) (*apiextensionsv1.CustomResourceDefinition, error) {
	all, err := crds.CRDs()
	if err != nil {
		return nil, err
	}
	for _, c := range all {
		if c.Spec.Names.Kind == kind {
			return c, nil
		}
	}
	return nil, fmt.Errorf("no CRD for %s among the embedded CRDs", kind)
}

// problems validates an object's JSON as the API server and the API types
// would, unknown values excepted.
func (k *kind) problems(ctx context.Context, d *crdschema.Decoded) []crdschema.Problem {
	_, admission, err := k.load()
	if err != nil {
		return []crdschema.Problem{{Message: err.Error()}}
	}
	obj := k.object(d.Object)
	var goErrs field.ErrorList
	key := keyOf(obj)
	for _, msg := range validation.IsDNS1123Subdomain(key.name) {
		goErrs = append(goErrs, field.Invalid(field.NewPath("metadata", "name"), key.name, msg))
	}
	if k.namespaced {
		for _, msg := range validation.IsDNS1123Label(key.namespace) {
			goErrs = append(goErrs, field.Invalid(field.NewPath("metadata", "namespace"), key.namespace, msg))
		}
	}
	// Both validations see the object as the API server would store it, defaults filled.
	obj = runtime.DeepCopyJSON(obj)
	admission.Default(obj)
	apiErrs := admission.Validate(ctx, runtime.DeepCopyJSON(obj))
	rejected := make([]string, 0, len(apiErrs))
	for _, e := range apiErrs {
		rejected = append(rejected, e.Field)
	}
	typedErrs, decodeErr := k.goValidate(obj)
	if decodeErr != nil {
		// A value the API server rejects (a duration such as "forever") keeps the object from
		// decoding: validate the rest, and leave the rejected fields to the API server's errors.
		rest, removed := crdschema.WithoutScalars(obj, rejected)
		typedErrs, decodeErr = k.goValidate(rest)
		typedErrs = crdschema.Unrelated(typedErrs, removed)
	}
	goErrs = append(goErrs, typedErrs...)
	out := crdschema.Problems(goErrs, apiErrs, d.Unknown)
	if decodeErr != nil && len(apiErrs) == 0 && len(d.Unknown) == 0 {
		out = append(out, crdschema.Problem{Message: fmt.Sprintf("reading the %s: %v", k.kind, decodeErr)})
	}
	return out
}

// object completes an object's JSON with its apiVersion and kind.
func (k *kind) object(obj map[string]any) map[string]any {
	obj["apiVersion"] = k.apiVersion
	if k.apiVersion == "" {
		obj["apiVersion"] = v1alpha1.SchemeGroupVersion.String()
	}
	obj["kind"] = k.kind
	if _, ok := obj["metadata"].(map[string]any); !ok {
		obj["metadata"] = map[string]any{}
	}
	if _, ok := obj["spec"].(map[string]any); !ok {
		obj["spec"] = map[string]any{}
	}
	return obj
}

// objectKey names one object: its namespace (a namespaced kind's only) and name.
type objectKey struct{ namespace, name string }

// String is the key as ids and import blocks spell it: namespace/name, or name.
func (k objectKey) String() string {
	if k.namespace == "" {
		return k.name
	}
	return k.namespace + "/" + k.name
}

// keyOf reads an object's key from its JSON.
func keyOf(obj map[string]any) objectKey {
	meta, _ := obj["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	namespace, _ := meta["namespace"].(string)
	return objectKey{namespace: namespace, name: name}
}

// ref is the object a key names, for the client's namespaced calls.
func (k *kind) ref(key objectKey) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: k.object(map[string]any{})}
	u.SetNamespace(key.namespace)
	u.SetName(key.name)
	return u
}

// get reads the object a key names; nil when it does not exist.
func (k *kind) get(ctx context.Context, c *kube.Client, key objectKey) (*unstructured.Unstructured, error) {
	if !k.namespaced {
		return c.Get(ctx, k.plural, key.name)
	}
	return c.GetObject(ctx, k.ref(key))
}

// apply writes obj with server-side apply.
func (k *kind) apply(ctx context.Context, c *kube.Client, obj map[string]any) (*unstructured.Unstructured, error) {
	if !k.namespaced {
		return c.Apply(ctx, k.plural, obj)
	}
	out, err := c.ApplyObject(ctx, &unstructured.Unstructured{Object: obj}, false)
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("%w: the cluster serves no %s.%s, or has no namespace %s: install the CRD (stowage_controller does "+
			"where it is missing; reference it with depends_on) and create the namespace, then apply again", err, k.plural,
			schema.FromAPIVersionAndKind(k.apiVersion, k.kind).Group, keyOf(obj).namespace)
	}
	return out, err
}

// replace writes obj whole.
func (k *kind) replace(ctx context.Context, c *kube.Client, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if !k.namespaced {
		return c.Replace(ctx, k.plural, obj)
	}
	return c.ReplaceObject(ctx, obj)
}

// remove deletes the object a key names; one already gone is not an error.
// A namespaced object is deleted in the foreground (DeleteObject), and
// waited for until the garbage collector has removed it.
func (k *kind) remove(ctx context.Context, c *kube.Client, key objectKey) error {
	if !k.namespaced {
		return c.Delete(ctx, k.plural, key.name)
	}
	if err := c.DeleteObject(ctx, k.ref(key)); err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, pollInterval, goneTimeout, true, func(ctx context.Context) (bool, error) {
		live, err := k.get(ctx, c, key)
		return live == nil, err
	})
}
