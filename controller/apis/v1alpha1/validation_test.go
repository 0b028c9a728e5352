package v1alpha1_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

func validNodePool() *v1alpha1.NodePool {
	return &v1alpha1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: v1alpha1.NodePoolSpec{
			Template: v1alpha1.NodeClaimTemplate{
				ObjectMeta: v1alpha1.TemplateObjectMeta{Labels: map[string]string{"example.com/team": "web", "node.kubernetes.io/role": "web"}},
				Spec: v1alpha1.NodeClaimTemplateSpec{
					Requirements: []v1alpha1.NodeSelectorRequirementWithMinValues{
						{Key: v1alpha1.LabelInstanceFamily, Operator: "In", Values: []string{"c6i", "m6i"}, MinValues: ptr.To(2)},
						{Key: v1alpha1.LabelCapacityType, Operator: "In", Values: []string{"spot", "on-demand"}},
						{Key: v1alpha1.LabelInstanceCPU, Operator: "Lte", Values: []string{"16"}},
						{Key: corev1.LabelTopologyZone, Operator: "NotIn", Values: []string{"us-east-1e"}},
						{Key: "example.com/gpu", Operator: "DoesNotExist"},
					},
					Taints:        []corev1.Taint{{Key: "dedicated", Value: "web", Effect: corev1.TaintEffectNoSchedule}},
					StartupTaints: []corev1.Taint{{Key: "example.com/cni", Effect: corev1.TaintEffectNoExecute}},
					NodeClassRef:  &v1alpha1.NodeClassReference{Group: "stowage.dev", Kind: "NodeClass", Name: "web"},
				},
			},
			Disruption: v1alpha1.Disruption{
				ConsolidationPolicy: "WhenEmpty",
				Budgets: []v1alpha1.Budget{
					{Nodes: "10%"},
					{Nodes: "0", Schedule: ptr.To("0 9 * * 1-5"), Duration: &metav1.Duration{Duration: 8 * 3600e9}, Reasons: []string{"Drifted", "Underutilized"}},
					{Nodes: "3", Schedule: ptr.To("@daily"), Duration: &metav1.Duration{Duration: 3600e9}},
				},
			},
			Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1000"), "nvidia.com/gpu": resource.MustParse("8")},
			Weight: ptr.To[int32](100),
		},
	}
}

func validNodeClass() *v1alpha1.NodeClass {
	return &v1alpha1.NodeClass{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: v1alpha1.NodeClassSpec{
			AMISelectorTerms:           []v1alpha1.AMISelectorTerm{{Alias: "al2023@latest"}},
			SubnetSelectorTerms:        []v1alpha1.SelectorTerm{{Tags: map[string]string{"stowage.dev/discovery": "prod"}}, {ID: "subnet-0a1"}},
			SecurityGroupSelectorTerms: []v1alpha1.SecurityGroupSelectorTerm{{Name: "nodes"}, {ID: "sg-0123"}},
			Role:                       "StowageNodeRole",
			MetadataOptions: &v1alpha1.MetadataOptions{HTTPEndpoint: ptr.To("enabled"), HTTPProtocolIPv6: ptr.To("disabled"),
				HTTPPutResponseHopLimit: ptr.To[int64](2), HTTPTokens: ptr.To("required")},
			Kubelet: &v1alpha1.KubeletConfiguration{
				MaxPods: ptr.To[int32](110), PodsPerCore: ptr.To[int32](0),
				KubeReserved:   map[string]string{"cpu": "100m", "memory": "1Gi", "ephemeral-storage": "1Gi", "pid": "1000"},
				SystemReserved: map[string]string{"memory": "0"},
				EvictionHard:   map[string]string{"memory.available": "5%", "nodefs.available": "10%", "imagefs.available": "2Gi"},
				EvictionSoft:   map[string]string{"memory.available": "10%"}, EvictionSoftGracePeriod: map[string]metav1.Duration{"memory.available": {Duration: 90e9}},
				EvictionMaxPodGracePeriod: ptr.To[int32](60), ImageGCHighThresholdPercent: ptr.To[int32](85), ImageGCLowThresholdPercent: ptr.To[int32](80),
				CPUCFSQuota: ptr.To(true),
			},
			InstanceStorePolicy:              ptr.To("RAID0"),
			CapacityReservationSelectorTerms: []v1alpha1.CapacityReservationSelectorTerm{{ID: "cr-0123abcd"}, {Tags: map[string]string{"team": "ml"}, OwnerID: "123456789012", InstanceMatchCriteria: "targeted"}},
		},
	}
}

// wantError is what a case expects: every error on this exact field path (a
// bad value may break more than one rule of it), and words of the messages that
// name the problem or the fix.
type wantError struct {
	field string
	words []string
}

func checkErrors(t *testing.T, errs field.ErrorList, want wantError) {
	t.Helper()
	if len(errs) == 0 {
		t.Fatalf("no error, want one on %s", want.field)
	}
	for _, e := range errs {
		if e.Field != want.field {
			t.Errorf("error on %q, want only %q: %v", e.Field, want.field, e)
		}
	}
	msg := errs.ToAggregate().Error()
	for _, w := range want.words {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q does not say %q", msg, w)
		}
	}
}

func TestValidObjectsPass(t *testing.T) {
	if errs := validNodePool().Validate(); len(errs) != 0 {
		t.Errorf("valid NodePool: %v", errs)
	}
	if errs := validNodeClass().Validate(); len(errs) != 0 {
		t.Errorf("valid NodeClass: %v", errs)
	}
	np := validNodePool()
	np.Spec.Template.Spec.NodeClassRef = &v1alpha1.NodeClassReference{Name: "web"} // group and kind default later
	np.Spec.Weight = nil
	if errs := np.Validate(); len(errs) != 0 {
		t.Errorf("NodePool without weight, group and kind: %v", errs)
	}
	nc := validNodeClass()
	nc.Spec.Role, nc.Spec.InstanceProfile = "", ptr.To("StowageNodeProfile")
	nc.Spec.AMISelectorTerms = []v1alpha1.AMISelectorTerm{{Tags: map[string]string{"team": "*"}}, {ID: "ami-0abc"}, {Name: "my-ami", Owner: "self"}}
	nc.Spec.MetadataOptions, nc.Spec.Kubelet = nil, nil
	if errs := nc.Validate(); len(errs) != 0 {
		t.Errorf("NodeClass with an instance profile and AMI tags, id and name: %v", errs)
	}
	for _, family := range v1alpha1.AMIFamilyNames {
		nc.Spec.AMIFamily = ptr.To(family)
		if errs := nc.Validate(); len(errs) != 0 {
			t.Errorf("NodeClass with images by id and amiFamily %s: %v", family, errs)
		}
	}
	nc = validNodeClass()
	for _, family := range []string{v1alpha1.AMIFamilyAL2023, v1alpha1.AMIFamilyCustom} {
		nc.Spec.AMIFamily = ptr.To(family)
		if errs := nc.Validate(); len(errs) != 0 {
			t.Errorf("NodeClass with alias al2023@latest and amiFamily %s: %v", family, errs)
		}
	}
}

func requirement(key, op string, values ...string) func(*v1alpha1.NodePool) {
	return func(np *v1alpha1.NodePool) {
		np.Spec.Template.Spec.Requirements = []v1alpha1.NodeSelectorRequirementWithMinValues{{Key: key, Operator: op, Values: values}}
	}
}

func TestKarpenterKeysAreUnderstoodInRequirements(t *testing.T) {
	for key := range v1alpha1.KarpenterLabelAliases {
		np := validNodePool()
		requirement(key, "Exists")(np)
		if errs := np.Validate(); len(errs) != 0 {
			t.Errorf("requirement on %s: %v", key, errs.ToAggregate())
		}
		if stowage := v1alpha1.CanonicalLabelKey(key); !v1alpha1.WellKnownLabels[stowage] {
			t.Errorf("%s stands for %s, which is not a well-known label", key, stowage)
		}
		if l := v1alpha1.KarpenterSelectorLabels(map[string]string{v1alpha1.CanonicalLabelKey(key): "x"}); l[key] != "x" || len(l) != 1 {
			t.Errorf("a node labelled %s=x gets the Karpenter labels %v, want %s=x", v1alpha1.CanonicalLabelKey(key), l, key)
		}
	}
	for _, marker := range []string{v1alpha1.KarpenterLabelNodePool, v1alpha1.KarpenterLabelRegistered, v1alpha1.KarpenterLabelInitialized, v1alpha1.KarpenterLabelNodeClass} {
		all := map[string]string{}
		for k := range v1alpha1.WellKnownLabels {
			all[k] = "x"
		}
		all[v1alpha1.LabelNodePool], all["stowage.dev/registered"] = "web", "true"
		if _, ok := v1alpha1.KarpenterSelectorLabels(all)[marker]; ok {
			t.Errorf("the Karpenter labels of a Stowage node include Karpenter's ownership marker %s", marker)
		}
	}
}

func TestNodePoolValidation(t *testing.T) {
	const reqs = "spec.template.spec.requirements[0]"
	withMinValues := func(n int, values ...string) func(*v1alpha1.NodePool) {
		return func(np *v1alpha1.NodePool) {
			requirement(v1alpha1.LabelInstanceFamily, "In", values...)(np)
			np.Spec.Template.Spec.Requirements[0].MinValues = ptr.To(n)
		}
	}
	label := func(k, v string) func(*v1alpha1.NodePool) {
		return func(np *v1alpha1.NodePool) { np.Spec.Template.ObjectMeta.Labels = map[string]string{k: v} }
	}
	budget := func(b v1alpha1.Budget) func(*v1alpha1.NodePool) {
		return func(np *v1alpha1.NodePool) { np.Spec.Disruption.Budgets = []v1alpha1.Budget{b} }
	}
	for _, tc := range []struct {
		name   string
		mutate func(*v1alpha1.NodePool)
		want   wantError
	}{
		{"requirement key not a label key", requirement("bad key!", "Exists"), wantError{reqs + ".key", []string{"bad key!", "alphanumeric"}}},
		{"requirement on the nodepool label", requirement(v1alpha1.LabelNodePool, "In", "web"),
			wantError{reqs + ".key", []string{"set by Stowage", "remove this requirement"}}},
		{"requirement on the hostname", requirement(corev1.LabelHostname, "Exists"), wantError{reqs + ".key", []string{"remove this requirement"}}},
		{"requirement on Karpenter's nodepool label", requirement("karpenter.sh/nodepool", "In", "default"),
			wantError{reqs + ".key", []string{"karpenter.sh/nodepool is a Karpenter label Stowage has no value for", "remove this requirement"}}},
		{"requirement on a Karpenter label without an equivalent", requirement("karpenter.k8s.aws/instance-cpu-manufacturer", "In", "intel"),
			wantError{reqs + ".key", []string{"catalogue does not record the CPU manufacturer", "remove this requirement"}}},
		{"unknown Karpenter key with a typo", requirement("karpenter.k8s.aws/instance-famly", "In", "c6i"),
			wantError{reqs + ".key", []string{"not a well-known label", "did you mean stowage.dev/instance-family?"}}},
		{"Stowage's name under Karpenter's other domain", requirement("karpenter.sh/instance-family", "In", "c6i"),
			wantError{reqs + ".key", []string{"did you mean stowage.dev/instance-family?"}}},
		{"unknown Stowage key with a typo", requirement("stowage.dev/instance-gpu-cont", "Gt", "0"),
			wantError{reqs + ".key", []string{"did you mean stowage.dev/instance-gpu-count?"}}},
		{"unknown Karpenter capacity type", requirement("karpenter.sh/capacity-type", "In", "preemptible"),
			wantError{reqs + ".values[0]", []string{`"preemptible"`, `"reserved", "spot", "on-demand"`}}},
		{"unknown operator", requirement(v1alpha1.LabelInstanceFamily, "Within", "c6i"),
			wantError{reqs + ".operator", []string{`"Within"`, `supported values: "In", "NotIn"`}}},
		{"In without values", requirement(v1alpha1.LabelInstanceFamily, "In"), wantError{reqs + ".values", []string{"at least one value", "use Exists"}}},
		{"Exists with values", requirement(v1alpha1.LabelInstanceFamily, "Exists", "c6i"), wantError{reqs + ".values", []string{"takes no values", "remove them"}}},
		{"DoesNotExist with values", requirement("example.com/gpu", "DoesNotExist", "yes"), wantError{reqs + ".values", []string{"remove them"}}},
		{"Gt with two values", requirement(v1alpha1.LabelInstanceCPU, "Gt", "4", "8"), wantError{reqs + ".values", []string{"exactly one integer"}}},
		{"Lt without a value", requirement(v1alpha1.LabelInstanceCPU, "Lt"), wantError{reqs + ".values", []string{"exactly one integer"}}},
		{"Gte with a word", requirement(v1alpha1.LabelInstanceCPU, "Gte", "four"), wantError{reqs + ".values[0]", []string{"four", `write e.g. "4"`}}},
		{"Lte with a negative", requirement(v1alpha1.LabelInstanceCPU, "Lte", "-1"), wantError{reqs + ".values[0]", []string{"non-negative"}}},
		{"value not a label value", requirement(v1alpha1.LabelInstanceFamily, "NotIn", "c6i", "m 6i"), wantError{reqs + ".values[1]", []string{"m 6i", "alphanumeric"}}},
		{"unknown capacity type", requirement(v1alpha1.LabelCapacityType, "In", "spot", "preemptible"),
			wantError{reqs + ".values[1]", []string{`"preemptible"`, `"reserved", "spot", "on-demand"`}}},
		{"minValues 0", withMinValues(0, "c6i", "m6i"), wantError{reqs + ".minValues", []string{"between 1 and 50"}}},
		{"minValues 51", withMinValues(51, "c6i"), wantError{reqs + ".minValues", []string{"between 1 and 50"}}},
		{"minValues above the values listed", withMinValues(3, "c6i", "m6i"),
			wantError{reqs + ".minValues", []string{"only 2 distinct ones are listed", "list more values or lower minValues"}}},
		{"label in the kubernetes.io domain", label("kubernetes.io/arch", "amd64"),
			wantError{"spec.template.metadata.labels[kubernetes.io/arch]", []string{"use your own prefix"}}},
		{"label under a kubernetes.io subdomain", label("topology.kubernetes.io/zone", "us-east-1a"),
			wantError{"spec.template.metadata.labels[topology.kubernetes.io/zone]", []string{"use your own prefix"}}},
		{"label in the stowage.dev domain", label("stowage.dev/team", "web"),
			wantError{"spec.template.metadata.labels[stowage.dev/team]", []string{"use your own prefix"}}},
		{"label in the k8s.io domain", label("example.k8s.io/x", "y"), wantError{"spec.template.metadata.labels[example.k8s.io/x]", []string{"use your own prefix"}}},
		{"label value not a label value", label("example.com/team", "web team"), wantError{"spec.template.metadata.labels[example.com/team]", []string{"web team"}}},
		{"label key not a label key", label("example.com/", "x"), wantError{"spec.template.metadata.labels[example.com/]", []string{"name part must be non-empty"}}},
		{"taint effect unknown", func(np *v1alpha1.NodePool) { np.Spec.Template.Spec.Taints[0].Effect = "Sometimes" },
			wantError{"spec.template.spec.taints[0].effect", []string{`"Sometimes"`, `"NoSchedule", "PreferNoSchedule", "NoExecute"`}}},
		{"taint without a key", func(np *v1alpha1.NodePool) { np.Spec.Template.Spec.Taints[0].Key = "" },
			wantError{"spec.template.spec.taints[0].key", []string{"name part must be non-empty"}}},
		{"startup taint value not a label value", func(np *v1alpha1.NodePool) { np.Spec.Template.Spec.StartupTaints[0].Value = "not ready" },
			wantError{"spec.template.spec.startupTaints[0].value", []string{"not ready"}}},
		{"no nodeClassRef", func(np *v1alpha1.NodePool) { np.Spec.Template.Spec.NodeClassRef = nil },
			wantError{"spec.template.spec.nodeClassRef.name", []string{"name the NodeClass"}}},
		{"nodeClassRef without a name", func(np *v1alpha1.NodePool) { np.Spec.Template.Spec.NodeClassRef.Name = "" },
			wantError{"spec.template.spec.nodeClassRef.name", []string{"name the NodeClass"}}},
		{"nodeClassRef to Karpenter's group", func(np *v1alpha1.NodePool) { np.Spec.Template.Spec.NodeClassRef.Group = "karpenter.k8s.aws" },
			wantError{"spec.template.spec.nodeClassRef.group", []string{`supported values: "stowage.dev"`}}},
		{"nodeClassRef to another kind", func(np *v1alpha1.NodePool) { np.Spec.Template.Spec.NodeClassRef.Kind = "EC2NodeClass" },
			wantError{"spec.template.spec.nodeClassRef.kind", []string{`supported values: "NodeClass"`}}},
		{"unknown consolidation policy", func(np *v1alpha1.NodePool) { np.Spec.Disruption.ConsolidationPolicy = "Always" },
			wantError{"spec.disruption.consolidationPolicy", []string{`"WhenEmpty", "WhenEmptyOrUnderutilized"`}}},
		{"budget nodes a word", budget(v1alpha1.Budget{Nodes: "ten"}), wantError{"spec.disruption.budgets[0].nodes", []string{`such as "3"`, `such as "10%"`}}},
		{"budget nodes over 100%", budget(v1alpha1.Budget{Nodes: "101%"}), wantError{"spec.disruption.budgets[0].nodes", []string{"0% to 100%"}}},
		{"budget nodes negative", budget(v1alpha1.Budget{Nodes: "-1"}), wantError{"spec.disruption.budgets[0].nodes", []string{"node count"}}},
		{"budget nodes empty", budget(v1alpha1.Budget{Nodes: ""}), wantError{"spec.disruption.budgets[0].nodes", []string{"node count"}}},
		{"budget schedule without duration", budget(v1alpha1.Budget{Nodes: "1", Schedule: ptr.To("@daily")}),
			wantError{"spec.disruption.budgets[0]", []string{"schedule and duration go together", "set both or neither"}}},
		{"budget duration without schedule", budget(v1alpha1.Budget{Nodes: "1", Duration: &metav1.Duration{Duration: 3600e9}}),
			wantError{"spec.disruption.budgets[0]", []string{"set both or neither"}}},
		{"budget schedule that never fires", budget(v1alpha1.Budget{Nodes: "1", Schedule: ptr.To("0 0 30 2 *"), Duration: &metav1.Duration{Duration: 3600e9}}),
			wantError{"spec.disruption.budgets[0].schedule", []string{"never fires"}}},
		{"budget schedule out of range", budget(v1alpha1.Budget{Nodes: "1", Schedule: ptr.To("61 * * * *"), Duration: &metav1.Duration{Duration: 3600e9}}),
			wantError{"spec.disruption.budgets[0].schedule", []string{"above maximum (59)", "0 9 * * 1-5"}}},
		{"budget schedule with an interval", budget(v1alpha1.Budget{Nodes: "1", Schedule: ptr.To("@every 5m"), Duration: &metav1.Duration{Duration: 3600e9}}),
			wantError{"spec.disruption.budgets[0].schedule", []string{"five fields"}}},
		{"budget schedule with four fields", budget(v1alpha1.Budget{Nodes: "1", Schedule: ptr.To("0 9 * *"), Duration: &metav1.Duration{Duration: 3600e9}}),
			wantError{"spec.disruption.budgets[0].schedule", []string{"five fields", "@daily", "got 4"}}},
		{"budget schedule an unknown macro", budget(v1alpha1.Budget{Nodes: "1", Schedule: ptr.To("@fortnightly"), Duration: &metav1.Duration{Duration: 3600e9}}),
			wantError{"spec.disruption.budgets[0].schedule", []string{"five fields"}}},
		{"budget reason unknown", budget(v1alpha1.Budget{Nodes: "1", Reasons: []string{"Empty", "Bored"}}),
			wantError{"spec.disruption.budgets[0].reasons[1]", []string{`"Bored"`, `"Empty", "Underutilized", "Drifted"`}}},
		{"budget reason Expired", budget(v1alpha1.Budget{Nodes: "1", Reasons: []string{"Expired"}}),
			wantError{"spec.disruption.budgets[0].reasons[0]", []string{"not budgeted", "remove Expired"}}},
		{"negative limit", func(np *v1alpha1.NodePool) {
			np.Spec.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("-1Gi")}
		},
			wantError{"spec.limits[memory]", []string{"must not be negative"}}},
		{"weight 0", func(np *v1alpha1.NodePool) { np.Spec.Weight = ptr.To[int32](0) }, wantError{"spec.weight", []string{"between 1 and 100", "leave it unset"}}},
		{"weight 101", func(np *v1alpha1.NodePool) { np.Spec.Weight = ptr.To[int32](101) }, wantError{"spec.weight", []string{"between 1 and 100"}}},
		{"minPodPriority above system-node-critical", func(np *v1alpha1.NodePool) { np.Spec.MinPodPriority = ptr.To[int32](2000001001) }, wantError{"spec.minPodPriority", []string{"at most 2000001000", "leave it unset"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			np := validNodePool()
			tc.mutate(np)
			checkErrors(t, np.Validate(), tc.want)
		})
	}
}

func TestNodePoolValidationReportsEveryProblem(t *testing.T) {
	np := validNodePool()
	np.Spec.Weight = ptr.To[int32](0)
	np.Spec.Template.Spec.NodeClassRef = nil
	np.Spec.Disruption.ConsolidationPolicy = "Always"
	got := map[string]bool{}
	for _, e := range np.Validate() {
		got[e.Field] = true
	}
	for _, f := range []string{"spec.weight", "spec.template.spec.nodeClassRef.name", "spec.disruption.consolidationPolicy"} {
		if !got[f] {
			t.Errorf("no error on %s; got %v", f, got)
		}
	}
}

func reservation(term v1alpha1.CapacityReservationSelectorTerm) func(*v1alpha1.NodeClass) {
	return func(nc *v1alpha1.NodeClass) {
		nc.Spec.CapacityReservationSelectorTerms = []v1alpha1.CapacityReservationSelectorTerm{term}
	}
}

func TestNodeClassValidation(t *testing.T) {
	ami := func(terms ...v1alpha1.AMISelectorTerm) func(*v1alpha1.NodeClass) {
		return func(nc *v1alpha1.NodeClass) { nc.Spec.AMISelectorTerms = terms }
	}
	subnet := func(term v1alpha1.SelectorTerm) func(*v1alpha1.NodeClass) {
		return func(nc *v1alpha1.NodeClass) { nc.Spec.SubnetSelectorTerms = []v1alpha1.SelectorTerm{term} }
	}
	sg := func(term v1alpha1.SecurityGroupSelectorTerm) func(*v1alpha1.NodeClass) {
		return func(nc *v1alpha1.NodeClass) {
			nc.Spec.SecurityGroupSelectorTerms = []v1alpha1.SecurityGroupSelectorTerm{term}
		}
	}
	kubelet := func(edit func(*v1alpha1.KubeletConfiguration)) func(*v1alpha1.NodeClass) {
		return func(nc *v1alpha1.NodeClass) { edit(nc.Spec.Kubelet) }
	}
	meta := func(edit func(*v1alpha1.MetadataOptions)) func(*v1alpha1.NodeClass) {
		return func(nc *v1alpha1.NodeClass) { edit(nc.Spec.MetadataOptions) }
	}
	for _, tc := range []struct {
		name   string
		mutate func(*v1alpha1.NodeClass)
		want   wantError
	}{
		{"no AMI terms", ami(), wantError{"spec.amiSelectorTerms", []string{"select an image", "alias: al2023@latest"}}},
		{"alias of an unknown family", ami(v1alpha1.AMISelectorTerm{Alias: "ubuntu@latest"}),
			wantError{"spec.amiSelectorTerms[0].alias", []string{"ubuntu@latest", "al2023 or bottlerocket", "al2023@latest"}}},
		{"alias without a version", ami(v1alpha1.AMISelectorTerm{Alias: "al2023"}), wantError{"spec.amiSelectorTerms[0].alias", []string{"family@version"}}},
		{"alias with an empty version", ami(v1alpha1.AMISelectorTerm{Alias: "bottlerocket@"}), wantError{"spec.amiSelectorTerms[0].alias", []string{"family@version"}}},
		{"alias beside another term", ami(v1alpha1.AMISelectorTerm{Alias: "al2023@latest"}, v1alpha1.AMISelectorTerm{ID: "ami-0abc"}),
			wantError{"spec.amiSelectorTerms[0].alias", []string{"only term"}}},
		{"alias beside an id in one term", ami(v1alpha1.AMISelectorTerm{Alias: "al2023@latest", ID: "ami-0abc"}),
			wantError{"spec.amiSelectorTerms[0].alias", []string{"only field"}}},
		{"empty AMI term", ami(v1alpha1.AMISelectorTerm{}), wantError{"spec.amiSelectorTerms[0]", []string{"set alias, tags, id or name"}}},
		{"owner alone", ami(v1alpha1.AMISelectorTerm{Owner: "self"}), wantError{"spec.amiSelectorTerms[0]", []string{"set alias, tags, id or name"}}},
		{"AMI tag with an empty value", ami(v1alpha1.AMISelectorTerm{Tags: map[string]string{"Name": ""}}),
			wantError{"spec.amiSelectorTerms[0].tags[Name]", []string{`use "*" to match any value`}}},
		{"no subnet terms", func(nc *v1alpha1.NodeClass) { nc.Spec.SubnetSelectorTerms = nil },
			wantError{"spec.subnetSelectorTerms", []string{"select at least one subnet by tags or id"}}},
		{"empty subnet term", subnet(v1alpha1.SelectorTerm{}), wantError{"spec.subnetSelectorTerms[0]", []string{"set tags or id"}}},
		{"subnet id beside tags", subnet(v1alpha1.SelectorTerm{ID: "subnet-0a1", Tags: map[string]string{"a": "b"}}),
			wantError{"spec.subnetSelectorTerms[0].id", []string{"remove the other fields"}}},
		{"subnet tag with an empty key", subnet(v1alpha1.SelectorTerm{Tags: map[string]string{"": "x"}}),
			wantError{"spec.subnetSelectorTerms[0].tags[]", []string{"must not be empty"}}},
		{"no security group terms", func(nc *v1alpha1.NodeClass) { nc.Spec.SecurityGroupSelectorTerms = nil },
			wantError{"spec.securityGroupSelectorTerms", []string{"by tags, id or name"}}},
		{"empty security group term", sg(v1alpha1.SecurityGroupSelectorTerm{}), wantError{"spec.securityGroupSelectorTerms[0]", []string{"set tags, id or name"}}},
		{"security group id beside a name", sg(v1alpha1.SecurityGroupSelectorTerm{ID: "sg-0123", Name: "nodes"}),
			wantError{"spec.securityGroupSelectorTerms[0].id", []string{"remove the other fields"}}},
		{"security group tag with an empty value", sg(v1alpha1.SecurityGroupSelectorTerm{Tags: map[string]string{"team": ""}}),
			wantError{"spec.securityGroupSelectorTerms[0].tags[team]", []string{`use "*"`}}},
		{"amiFamily other than the alias's", func(nc *v1alpha1.NodeClass) { nc.Spec.AMIFamily = ptr.To("Bottlerocket") },
			wantError{"spec.amiFamily", []string{"the alias's family or Custom", "al2023@latest"}}},
		{"amiFamily AL2", func(nc *v1alpha1.NodeClass) { nc.Spec.AMIFamily = ptr.To("AL2") },
			wantError{"spec.amiFamily", []string{`"AL2"`, `"AL2023", "Bottlerocket", "Custom"`}}},
		{"instance store policy other than RAID0", func(nc *v1alpha1.NodeClass) { nc.Spec.InstanceStorePolicy = ptr.To("RAID1") },
			wantError{"spec.instanceStorePolicy", []string{`"RAID1"`, `"RAID0"`}}},
		{"empty reservation term", reservation(v1alpha1.CapacityReservationSelectorTerm{OwnerID: "123456789012"}),
			wantError{"spec.capacityReservationSelectorTerms[0]", []string{"set tags, id or instanceMatchCriteria"}}},
		{"reservation id beside tags", reservation(v1alpha1.CapacityReservationSelectorTerm{ID: "cr-0abc", Tags: map[string]string{"a": "b"}}),
			wantError{"spec.capacityReservationSelectorTerms[0].id", []string{"on its own"}}},
		{"reservation id malformed", reservation(v1alpha1.CapacityReservationSelectorTerm{ID: "res-1"}),
			wantError{"spec.capacityReservationSelectorTerms[0].id", []string{"cr-0123456789abcdef0"}}},
		{"reservation owner malformed", reservation(v1alpha1.CapacityReservationSelectorTerm{InstanceMatchCriteria: "open", OwnerID: "acme"}),
			wantError{"spec.capacityReservationSelectorTerms[0].ownerID", []string{"12-digit"}}},
		{"reservation match criteria unknown", reservation(v1alpha1.CapacityReservationSelectorTerm{InstanceMatchCriteria: "any"}),
			wantError{"spec.capacityReservationSelectorTerms[0].instanceMatchCriteria", []string{`"open", "targeted"`}}},
		{"evictionSoft without a grace period", kubelet(func(k *v1alpha1.KubeletConfiguration) { k.EvictionSoft["nodefs.available"] = "15%" }),
			wantError{"spec.kubelet.evictionSoft[nodefs.available]", []string{"needs a grace period"}}},
		{"grace period without evictionSoft", kubelet(func(k *v1alpha1.KubeletConfiguration) {
			k.EvictionSoftGracePeriod["pid.available"] = metav1.Duration{Duration: 1e9}
		}),
			wantError{"spec.kubelet.evictionSoftGracePeriod[pid.available]", []string{"needs its threshold in evictionSoft"}}},
		{"image GC high below low", kubelet(func(k *v1alpha1.KubeletConfiguration) { k.ImageGCHighThresholdPercent = ptr.To[int32](70) }),
			wantError{"spec.kubelet.imageGCHighThresholdPercent", []string{"above imageGCLowThresholdPercent (80)"}}},
		{"image GC percent above 100", kubelet(func(k *v1alpha1.KubeletConfiguration) {
			k.ImageGCLowThresholdPercent, k.ImageGCHighThresholdPercent = nil, ptr.To[int32](101)
		}),
			wantError{"spec.kubelet.imageGCHighThresholdPercent", []string{"between 0 and 100"}}},
		{"role and instance profile", func(nc *v1alpha1.NodeClass) { nc.Spec.InstanceProfile = ptr.To("profile") },
			wantError{"spec.role", []string{"set exactly one of role and instanceProfile"}}},
		{"neither role nor instance profile", func(nc *v1alpha1.NodeClass) { nc.Spec.Role = "" },
			wantError{"spec.role", []string{"set exactly one of role and instanceProfile"}}},
		{"httpTokens unknown", meta(func(m *v1alpha1.MetadataOptions) { m.HTTPTokens = ptr.To("sometimes") }),
			wantError{"spec.metadataOptions.httpTokens", []string{`"sometimes"`, `"required", "optional"`}}},
		{"hop limit 0", meta(func(m *v1alpha1.MetadataOptions) { m.HTTPPutResponseHopLimit = ptr.To[int64](0) }),
			wantError{"spec.metadataOptions.httpPutResponseHopLimit", []string{"between 1 and 64"}}},
		{"hop limit 65", meta(func(m *v1alpha1.MetadataOptions) { m.HTTPPutResponseHopLimit = ptr.To[int64](65) }),
			wantError{"spec.metadataOptions.httpPutResponseHopLimit", []string{"between 1 and 64"}}},
		{"httpEndpoint unknown", meta(func(m *v1alpha1.MetadataOptions) { m.HTTPEndpoint = ptr.To("on") }),
			wantError{"spec.metadataOptions.httpEndpoint", []string{`"enabled", "disabled"`}}},
		{"httpProtocolIPv6 unknown", meta(func(m *v1alpha1.MetadataOptions) { m.HTTPProtocolIPv6 = ptr.To("yes") }),
			wantError{"spec.metadataOptions.httpProtocolIPv6", []string{`"enabled", "disabled"`}}},
		{"kubeReserved of an unknown resource", kubelet(func(k *v1alpha1.KubeletConfiguration) { k.KubeReserved = map[string]string{"gpu": "1"} }),
			wantError{"spec.kubelet.kubeReserved[gpu]", []string{`"cpu", "memory", "ephemeral-storage", "pid"`}}},
		{"kubeReserved cpu not a quantity", kubelet(func(k *v1alpha1.KubeletConfiguration) { k.KubeReserved = map[string]string{"cpu": "lots"} }),
			wantError{"spec.kubelet.kubeReserved[cpu]", []string{"non-negative quantity such as 100m or 1Gi"}}},
		{"systemReserved memory negative", kubelet(func(k *v1alpha1.KubeletConfiguration) { k.SystemReserved = map[string]string{"memory": "-1Gi"} }),
			wantError{"spec.kubelet.systemReserved[memory]", []string{"non-negative quantity"}}},
		{"evictionHard of an unknown signal", kubelet(func(k *v1alpha1.KubeletConfiguration) { k.EvictionHard = map[string]string{"memory.free": "1Gi"} }),
			wantError{"spec.kubelet.evictionHard[memory.free]", []string{`"memory.available", "nodefs.available"`}}},
		{"evictionHard above 100%", kubelet(func(k *v1alpha1.KubeletConfiguration) { k.EvictionHard = map[string]string{"nodefs.available": "110%"} }),
			wantError{"spec.kubelet.evictionHard[nodefs.available]", []string{"percentage such as 10%"}}},
		{"evictionHard not a quantity", kubelet(func(k *v1alpha1.KubeletConfiguration) { k.EvictionHard = map[string]string{"memory.available": "lots"} }),
			wantError{"spec.kubelet.evictionHard[memory.available]", []string{"quantity such as 100Mi"}}},
		{"maxPods negative", kubelet(func(k *v1alpha1.KubeletConfiguration) { k.MaxPods = ptr.To[int32](-1) }),
			wantError{"spec.kubelet.maxPods", []string{"must not be negative"}}},
		{"podsPerCore negative", kubelet(func(k *v1alpha1.KubeletConfiguration) { k.PodsPerCore = ptr.To[int32](-4) }),
			wantError{"spec.kubelet.podsPerCore", []string{"must not be negative"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nc := validNodeClass()
			tc.mutate(nc)
			checkErrors(t, nc.Validate(), tc.want)
		})
	}
}

func TestIsRestrictedLabel(t *testing.T) {
	for key, want := range map[string]bool{
		"kubernetes.io/arch":                        true,
		"node.kubernetes.io/instance-type":          true, // well-known, though its domain is an exception
		"topology.kubernetes.io/zone":               true,
		"stowage.dev/instance-family":               true,
		"stowage.dev/anything":                      true,
		"team.stowage.dev/x":                        true,
		"k8s.io/x":                                  true,
		"node.kubernetes.io/role":                   false,
		"node-restriction.kubernetes.io/team":       false,
		"kops.k8s.io/instancegroup":                 false,
		"example.com/team":                          false,
		"team":                                      false,
		"notkubernetes.io/x":                        false,
		"karpenter.sh/nodepool":                     true, // Karpenter's marker: a pool setting it would hand its nodes to Karpenter
		"karpenter.sh/capacity-type":                true,
		"karpenter.k8s.aws/instance-family":         true,
		"karpenter.k8s.aws/anything":                true,
		"team.karpenter.sh/x":                       true,
		"kubernetes.io.example.com/x":               false,
		"sub.node-restriction.kubernetes.io/tenant": false,
	} {
		if got := v1alpha1.IsRestrictedLabel(key); got != want {
			t.Errorf("IsRestrictedLabel(%q) = %v, want %v", key, got, want)
		}
	}
}

func TestParseBudgetNodes(t *testing.T) {
	for _, tc := range []struct {
		in         string
		value      int
		percent    bool
		allowedOf7 int
	}{
		{"0", 0, false, 0}, {"3", 3, false, 3}, {"10%", 10, true, 0}, {"50%", 50, true, 3}, {"100%", 100, true, 7}, {"0%", 0, true, 0},
	} {
		b, err := v1alpha1.ParseBudgetNodes(tc.in)
		if err != nil || b.Value != tc.value || b.Percent != tc.percent {
			t.Errorf("ParseBudgetNodes(%q) = %+v, %v; want %d, percent %v", tc.in, b, err, tc.value, tc.percent)
			continue
		}
		if got := b.Allowed(7); got != tc.allowedOf7 {
			t.Errorf("%q of 7 nodes allows %d, want %d (percentages round down)", tc.in, got, tc.allowedOf7)
		}
	}
	for _, in := range []string{"", "%", "ten", "1.5", "-1", "101%", "-5%", "10 %"} {
		if _, err := v1alpha1.ParseBudgetNodes(in); err == nil {
			t.Errorf("ParseBudgetNodes(%q) accepted", in)
		}
	}
}
