package scheduler

import (
	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

// labelKeys says how a solve reads the label keys of pods and nodes. By
// default Karpenter's well-known keys (karpenter.sh/capacity-type,
// karpenter.k8s.aws/instance-family, ...) stand for Stowage's, because the
// nodes Stowage launches carry both: a pod selecting on either key is served
// alike by a new node. An existing node is matched by its labels as written,
// as kube-scheduler matches them (a pod that wrote Stowage's key does not fit
// a node Karpenter launched), but its topology domains are read through the
// aliases, so that a spread counts Karpenter's nodes as kube-scheduler does. With
// Options.NoKarpenterLabels the nodes carry Stowage's labels only, so a pod's
// keys are read literally, as kube-scheduler reads them. NodePool
// requirements always read Karpenter's keys as Stowage's (scheduling.FromAPI):
// they say what to launch, not what a node is labelled.
type labelKeys struct {
	literal bool
}

// key is the key a topology rule groups nodes by.
func (k labelKeys) key(key string) string {
	if k.literal {
		return key
	}
	return v1alpha1.CanonicalLabelKey(key)
}

// reqs reads a pod's node requirements.
func (k labelKeys) reqs(rs scheduling.Requirements) scheduling.Requirements {
	if k.literal {
		return rs
	}
	return rs.Canonical()
}

// terms reads a pod's alternative node requirements.
func (k labelKeys) terms(terms []scheduling.Requirements) []scheduling.Requirements {
	if k.literal {
		return terms
	}
	out := make([]scheduling.Requirements, len(terms))
	for i, t := range terms {
		out[i] = t.Canonical()
	}
	return out
}

// nodeLabels reads an existing node's labels for topology domains: a node
// labelled with Karpenter's keys only gets Stowage's as well.
func (k labelKeys) nodeLabels(labels map[string]string) map[string]string {
	if k.literal {
		return labels
	}
	return v1alpha1.WithStowageLabels(labels)
}
