package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/stowage-dev/stowage/controller/apis/crds"
	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/provider/internal/crdschema"
)

// kind is one Stowage kind served as a Terraform resource.
type kind struct {
	typeName    string // after "stowage_"
	kind        string
	plural      string
	description string
	spec        crdschema.Spec
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
		crd, err := findCRD(k.kind)
		if err != nil {
			k.err = err
			return
		}
		extra := []*crdschema.Node{
			{Name: "id", Kind: crdschema.String},
			{Name: "name", Kind: crdschema.String, JSON: []string{"metadata", "name"}, Required: true},
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
	name, _ := obj["metadata"].(map[string]any)["name"].(string)
	for _, msg := range validation.IsDNS1123Subdomain(name) {
		goErrs = append(goErrs, field.Invalid(field.NewPath("metadata", "name"), name, msg))
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
	obj["apiVersion"] = v1alpha1.SchemeGroupVersion.String()
	obj["kind"] = k.kind
	if _, ok := obj["metadata"].(map[string]any); !ok {
		obj["metadata"] = map[string]any{}
	}
	if _, ok := obj["spec"].(map[string]any); !ok {
		obj["spec"] = map[string]any{}
	}
	return obj
}
