package provider

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// podModel is one pod shape of the workload, with its replica count.
type podModel struct {
	Name           types.String      `tfsdk:"name"`
	Namespace      types.String      `tfsdk:"namespace"`
	Replicas       types.Int64       `tfsdk:"replicas"`
	Requests       map[string]string `tfsdk:"requests"`
	Labels         map[string]string `tfsdk:"labels"`
	NodeSelector   map[string]string `tfsdk:"node_selector"`
	Tolerations    []tolerationModel `tfsdk:"toleration"`
	TopologySpread []spreadModel     `tfsdk:"topology_spread"`
}

type tolerationModel struct {
	Key      types.String `tfsdk:"key"`
	Operator types.String `tfsdk:"operator"`
	Value    types.String `tfsdk:"value"`
	Effect   types.String `tfsdk:"effect"`
}

type spreadModel struct {
	TopologyKey       types.String `tfsdk:"topology_key"`
	MaxSkew           types.Int64  `tfsdk:"max_skew"`
	WhenUnsatisfiable types.String `tfsdk:"when_unsatisfiable"`
}

func podBlock() schema.ListNestedBlock {
	str := func(required bool, d string) schema.StringAttribute {
		return schema.StringAttribute{Required: required, Optional: !required, MarkdownDescription: d}
	}
	strMap := func(d string) schema.MapAttribute {
		return schema.MapAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: d}
	}
	return schema.ListNestedBlock{
		MarkdownDescription: "A pod shape of the workload, repeated `replicas` times. Its pods carry the label `app` = `name` " +
			"(plus `labels`), which is what its topology spreads count.",
		NestedObject: schema.NestedBlockObject{
			Attributes: map[string]schema.Attribute{
				"name":      str(true, "Name of the pod shape; the pods are named name-0, name-1, ..."),
				"namespace": str(false, "Namespace of the pods. Defaults to `default`."),
				"replicas":  schema.Int64Attribute{Optional: true, MarkdownDescription: "Number of pods. Defaults to 1."},
				"requests": schema.MapAttribute{Required: true, ElementType: types.StringType,
					MarkdownDescription: "Resource requests of each pod, such as `{ cpu = \"500m\", memory = \"1Gi\" }`."},
				"labels":        strMap("Labels of the pods, beside `app`."),
				"node_selector": strMap("Node selector of the pods, such as `{ \"stowage.dev/capacity-type\" = \"on-demand\" }`."),
			},
			Blocks: map[string]schema.Block{
				"toleration": schema.ListNestedBlock{MarkdownDescription: "A toleration of the pods.", NestedObject: schema.NestedBlockObject{
					Attributes: map[string]schema.Attribute{
						"key": str(false, "Taint key; empty with operator Exists tolerates every taint."), "operator": str(false, "`Equal` (the default) or `Exists`."),
						"value": str(false, "Taint value, for Equal."), "effect": str(false, "Taint effect; empty matches every effect."),
					}}},
				"topology_spread": schema.ListNestedBlock{MarkdownDescription: "A topology spread constraint over the shape's own pods.", NestedObject: schema.NestedBlockObject{
					Attributes: map[string]schema.Attribute{
						"topology_key":       str(true, "Node label to spread over, such as `topology.kubernetes.io/zone`."),
						"max_skew":           schema.Int64Attribute{Optional: true, MarkdownDescription: "Largest allowed difference in pods between two domains. Defaults to 1."},
						"when_unsatisfiable": str(false, "`DoNotSchedule` (the default) or `ScheduleAnyway`."),
					}}},
			},
		},
	}
}

// workloadPods expands the pod shapes into pending pods.
func workloadPods(shapes []podModel) ([]*corev1.Pod, error) {
	var pods []*corev1.Pod
	for i, s := range shapes {
		template, err := s.pod()
		if err != nil {
			return nil, fmt.Errorf("pod[%d] (%s): %w", i, s.Name.ValueString(), err)
		}
		n := int64(1)
		if !s.Replicas.IsNull() {
			n = s.Replicas.ValueInt64()
		}
		if n < 0 || n > 100000 {
			return nil, fmt.Errorf("pod[%d] (%s): replicas %d must be between 0 and 100000", i, s.Name.ValueString(), n)
		}
		for r := range n {
			p := template.DeepCopy()
			p.Name = fmt.Sprintf("%s-%d", template.Name, r)
			pods = append(pods, p)
		}
	}
	return pods, nil
}

func (s podModel) pod() (*corev1.Pod, error) {
	ns := "default"
	if !s.Namespace.IsNull() && s.Namespace.ValueString() != "" {
		ns = s.Namespace.ValueString()
	}
	labels := map[string]string{"app": s.Name.ValueString()}
	for k, v := range s.Labels {
		labels[k] = v
	}
	requests := corev1.ResourceList{}
	for k, v := range s.Requests {
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return nil, fmt.Errorf("requests[%q] = %q is not a quantity such as 500m or 1Gi", k, v)
		}
		requests[corev1.ResourceName(k)] = q
	}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: s.Name.ValueString(), Namespace: ns, Labels: labels},
		Spec: corev1.PodSpec{
			NodeSelector: s.NodeSelector,
			Containers:   []corev1.Container{{Name: "main", Resources: corev1.ResourceRequirements{Requests: requests}}},
		},
	}
	for _, t := range s.Tolerations {
		p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: t.Key.ValueString(),
			Operator: corev1.TolerationOperator(t.Operator.ValueString()), Value: t.Value.ValueString(), Effect: corev1.TaintEffect(t.Effect.ValueString())})
	}
	for _, sp := range s.TopologySpread {
		p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, sp.constraint(labels))
	}
	return p, nil
}

func (sp spreadModel) constraint(labels map[string]string) corev1.TopologySpreadConstraint {
	skew := int32(1)
	if !sp.MaxSkew.IsNull() {
		skew = int32(sp.MaxSkew.ValueInt64())
	}
	when := corev1.DoNotSchedule
	if w := sp.WhenUnsatisfiable.ValueString(); w != "" {
		when = corev1.UnsatisfiableConstraintAction(w)
	}
	return corev1.TopologySpreadConstraint{TopologyKey: sp.TopologyKey.ValueString(), MaxSkew: skew, WhenUnsatisfiable: when,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": labels["app"]}}}
}
