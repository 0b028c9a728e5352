package checker

import "fmt"

// Constraint names the kind of rule a Violation breaks.
type Constraint string

// Constraints the checker verifies.
const (
	ConstraintPlacement       Constraint = "placement"
	ConstraintResources       Constraint = "resources"
	ConstraintOffering        Constraint = "offering"
	ConstraintRequirements    Constraint = "requirements"
	ConstraintNodeAffinity    Constraint = "node-affinity"
	ConstraintTaints          Constraint = "taints"
	ConstraintTopologySpread  Constraint = "topology-spread"
	ConstraintPodAffinity     Constraint = "pod-affinity"
	ConstraintPodAntiAffinity Constraint = "pod-anti-affinity"
	ConstraintHostPorts       Constraint = "host-ports"
	ConstraintLimits          Constraint = "nodepool-limits"
	ConstraintVolumeTopology  Constraint = "volume-topology"
	// ConstraintPriority: a pod the solve's bound left waiting outranks a
	// pod it placed.
	ConstraintPriority Constraint = "priority"
)

// Violation is one broken rule: the pod (namespace/name, empty for node-level
// rules), the node or NodeClaim (or NodePool for limits), and what is wrong.
type Violation struct {
	Pod        string
	Node       string
	Constraint Constraint
	Message    string
}

// String renders the violation on one line.
func (v Violation) String() string {
	return fmt.Sprintf("%s: pod=%q node=%q: %s", v.Constraint, v.Pod, v.Node, v.Message)
}
