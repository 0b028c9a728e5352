package v1alpha1

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// HashVersion changes whenever NodePoolHash or NodeClassHash change what they
// digest, so that a controller of a new version does not see every node drifted
// because the formula moved; claims record it in AnnotationHashVersion.
const HashVersion = "v2"

// AnnotationHashVersion records the HashVersion a claim's hashes were computed with.
const AnnotationHashVersion = Group + "/hash-version"

// NodePoolHash digests the part of a pool's template that a launched node
// carries for life: its labels, annotations, taints, startup taints and
// NodeClass reference. A claim records it at launch; a pool whose hash moves
// away from a claim's has drifted that claim.
//
// Requirements are left out on purpose: widening a requirement (one more
// instance family) must not replace every node of the pool. A node that no
// longer meets a narrowed requirement is found by comparing its labels with the
// requirements instead. Taint order and the taints' TimeAdded do not count.
func NodePoolHash(np *NodePool) string {
	t := np.Spec.Template
	return digest(struct {
		Labels        map[string]string   `json:"labels,omitempty"`
		Annotations   map[string]string   `json:"annotations,omitempty"`
		Taints        []corev1.Taint      `json:"taints,omitempty"`
		StartupTaints []corev1.Taint      `json:"startupTaints,omitempty"`
		NodeClassRef  *NodeClassReference `json:"nodeClassRef,omitempty"`
	}{
		Labels:        emptyToNil(t.ObjectMeta.Labels),
		Annotations:   emptyToNil(t.ObjectMeta.Annotations),
		Taints:        canonicalTaints(t.Spec.Taints),
		StartupTaints: canonicalTaints(t.Spec.StartupTaints),
		NodeClassRef:  canonicalRef(t.Spec.NodeClassRef),
	})
}

// canonicalRef fills the group and kind the API server defaults, so that a
// pool read back from the server hashes as the one a client wrote.
func canonicalRef(ref *NodeClassReference) *NodeClassReference {
	if ref == nil {
		return nil
	}
	out := *ref
	out.Group = cmp.Or(out.Group, Group)
	out.Kind = cmp.Or(out.Kind, "NodeClass")
	return &out
}

// NodeClassHash digests what a NodeClass fixes on a node at launch and cannot
// change afterwards: IAM, disks, metadata options, user data, tags, kubelet
// settings, public IP and monitoring. The selector terms are left out: what they
// resolve to (the image, subnets and security groups) is compared with the
// running instance by the cloud layer, so a selector rewritten to find the same
// image replaces nothing; and which reservations new nodes may use says nothing
// about a node already running (Karpenter does not drift on it either). A
// volume's rootVolume mark is left out too: it says which volume the
// prediction of ephemeral storage reads, and launches the same instance.
// (controller/aws's TestEveryNodeClassFieldReachesTheNodeOrSaysWhyNot holds
// the hash to what reaches the launch template or the user data.)
func NodeClassHash(nc *NodeClass) string {
	s := nc.Spec.DeepCopy()
	s.AMISelectorTerms, s.SubnetSelectorTerms, s.SecurityGroupSelectorTerms = nil, nil, nil
	s.CapacityReservationSelectorTerms = nil
	for i := range s.BlockDeviceMappings {
		s.BlockDeviceMappings[i].RootVolume = false
	}
	if len(s.Tags) == 0 {
		s.Tags = nil
	}
	return digest(s)
}

func digest(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic("v1alpha1: encoding an API type for its hash: " + err.Error()) // API types always encode
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

func emptyToNil(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

func canonicalTaints(in []corev1.Taint) []corev1.Taint {
	if len(in) == 0 {
		return nil
	}
	out := make([]corev1.Taint, len(in))
	for i, t := range in {
		out[i] = corev1.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect}
	}
	slices.SortFunc(out, func(a, b corev1.Taint) int {
		return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.Effect, b.Effect), cmp.Compare(a.Value, b.Value))
	})
	return out
}
