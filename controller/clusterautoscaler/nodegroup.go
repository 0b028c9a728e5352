package clusterautoscaler

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// NodeGroup is one group of nodes a Cluster Autoscaler scales, from an EKS
// managed node group or an Auto Scaling group, with what CA knows of its
// nodes: their instance types, labels, taints and extra resources.
type NodeGroup struct {
	// Name is the node group's (or the Auto Scaling group's) name.
	Name string
	// Source says where it was read: file and document.
	Source string
	// Cluster is the EKS cluster, when the input names it.
	Cluster string
	// InstanceTypes are the types the group launches; CA builds its template
	// node from the first.
	InstanceTypes []string
	// CapacityType is on-demand, spot, or both for an Auto Scaling group that
	// mixes them (OnDemandPercentageAboveBaseCapacity between 0 and 100).
	CapacityTypes []string
	// Zones and Subnets the group launches into, when the input has them.
	Zones, Subnets   []string
	MinSize, MaxSize int
	DesiredSize      int
	Labels           map[string]string
	Taints           []corev1.Taint
	// Resources are extended resources CA's node-template tags declare (nvidia.com/gpu: 4).
	Resources map[string]string
	// AMIFamily is al2023 or bottlerocket, from the managed node group's AMI type.
	AMIFamily string
	// NodeRole is the nodes' IAM role name, from a managed node group.
	NodeRole string
	// Notes are what the proposal could not carry over, for the output.
	Notes []string

	launchTemplate *asgLaunchTemplate
	asgNames       []string
}

// CA's node-template tags: what a group's nodes carry when it has none
// running to look at.
const (
	tagLabel    = "k8s.io/cluster-autoscaler/node-template/label/"
	tagTaint    = "k8s.io/cluster-autoscaler/node-template/taint/"
	tagResource = "k8s.io/cluster-autoscaler/node-template/resources/"
	tagCluster  = "k8s.io/cluster-autoscaler/"
)

// applyTags reads CA's node-template tags into g; a malformed taint tag is an
// error naming the tag and the form CA reads.
func (g *NodeGroup) applyTags(tags map[string]string) error {
	for k, v := range tags {
		switch {
		case strings.HasPrefix(k, tagLabel):
			g.setLabel(strings.TrimPrefix(k, tagLabel), v)
		case strings.HasPrefix(k, tagTaint):
			t, err := parseTaintTag(strings.TrimPrefix(k, tagTaint), v)
			if err != nil {
				return fmt.Errorf("node group %s: tag %s: %w", g.Name, k, err)
			}
			g.addTaint(t)
		case strings.HasPrefix(k, tagResource):
			if g.Resources == nil {
				g.Resources = map[string]string{}
			}
			g.Resources[strings.TrimPrefix(k, tagResource)] = v
		case strings.HasPrefix(k, tagCluster) && g.Cluster == "" && (v == "owned" || v == "true") && k != tagCluster+"enabled":
			g.Cluster = strings.TrimPrefix(k, tagCluster)
		case k == "eks:cluster-name" && g.Cluster == "":
			g.Cluster = v
		}
	}
	return nil
}

// parseTaintTag reads CA's value:Effect form (the value may be empty).
func parseTaintTag(key, v string) (corev1.Taint, error) {
	value, effect, ok := strings.Cut(v, ":")
	if !ok {
		return corev1.Taint{}, fmt.Errorf("%q is not value:Effect (e.g. true:NoSchedule)", v)
	}
	t := corev1.Taint{Key: key, Value: value, Effect: corev1.TaintEffect(effect)}
	switch t.Effect {
	case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		return t, nil
	}
	return corev1.Taint{}, fmt.Errorf("effect %q: use NoSchedule, PreferNoSchedule or NoExecute", effect)
}

// eksTaintEffects maps EKS's taint effects onto Kubernetes'.
var eksTaintEffects = map[string]corev1.TaintEffect{
	"NO_SCHEDULE": corev1.TaintEffectNoSchedule, "NO_EXECUTE": corev1.TaintEffectNoExecute, "PREFER_NO_SCHEDULE": corev1.TaintEffectPreferNoSchedule,
}

func (g *NodeGroup) setLabel(k, v string) {
	if g.Labels == nil {
		g.Labels = map[string]string{}
	}
	g.Labels[k] = v
}

func (g *NodeGroup) addTaint(t corev1.Taint) {
	for _, have := range g.Taints {
		if have.Key == t.Key && have.Effect == t.Effect {
			return
		}
	}
	g.Taints = append(g.Taints, t)
}

// amiFamily maps an EKS AMI type onto Stowage's image family.
func amiFamily(amiType string) string {
	if strings.HasPrefix(amiType, "BOTTLEROCKET") {
		return "bottlerocket"
	}
	return "al2023"
}
