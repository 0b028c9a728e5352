package aws_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	stowaws "github.com/stowage-dev/stowage/controller/aws"
	"github.com/stowage-dev/stowage/internal/awsemu"
)

// TestLaunchedNodesCarryKarpentersSelectorLabels: a launched claim's labels
// (which registration puts on the Node) include Karpenter's copies of the
// capacity type and instance attributes, with the same values, and never
// Karpenter's ownership markers; NoKarpenterLabels leaves the copies off.
func TestLaunchedNodesCarryKarpentersSelectorLabels(t *testing.T) {
	var specs []awsemu.InstanceTypeSpec
	for _, s := range awsemu.BuiltinCatalogue() {
		if s.Name == "inf2.xlarge" {
			specs = append(specs, s)
		}
	}
	for _, off := range []bool{false, true} {
		e := newEnv(t, specs, 1, func(_ *awsemu.Config, o *stowaws.Options) { o.NoKarpenterLabels = off })
		got, err := e.cp.Create(ctx(t), nodeClaim("neuron", []string{"inf2.xlarge"}, []string{"on-demand"}))
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{
			"karpenter.sh/capacity-type":                          "on-demand",
			"karpenter.k8s.aws/instance-family":                   "inf2",
			"karpenter.k8s.aws/instance-size":                     "xlarge",
			"karpenter.k8s.aws/instance-cpu":                      "4",
			"karpenter.k8s.aws/instance-accelerator-name":         "inferentia2",
			"karpenter.k8s.aws/instance-accelerator-count":        "1",
			"karpenter.k8s.aws/instance-accelerator-manufacturer": "aws",
		}
		for k, v := range want {
			stowage := v1alpha1.CanonicalLabelKey(k)
			if got.Labels[stowage] != v {
				t.Errorf("%s = %q, want %q", stowage, got.Labels[stowage], v)
			}
			if has := got.Labels[k] == v; has == off {
				t.Errorf("NoKarpenterLabels=%t: %s = %q", off, k, got.Labels[k])
			}
		}
		for _, marker := range []string{v1alpha1.KarpenterLabelNodePool, v1alpha1.KarpenterLabelRegistered, v1alpha1.KarpenterLabelInitialized, v1alpha1.KarpenterLabelNodeClass} {
			if v, ok := got.Labels[marker]; ok {
				t.Errorf("the launched claim carries Karpenter's ownership marker %s=%s", marker, v)
			}
		}
		if got.Labels[corev1.LabelInstanceTypeStable] != "inf2.xlarge" {
			t.Errorf("launched %s, want inf2.xlarge", got.Labels[corev1.LabelInstanceTypeStable])
		}
	}
}
