package v1alpha1_test

import (
	"reflect"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

func duration(t *testing.T, d *v1alpha1.NillableDuration) string {
	t.Helper()
	if d == nil {
		return "<unset>"
	}
	return d.String()
}

func TestNodePoolDefaults(t *testing.T) {
	for _, tc := range []struct {
		name                                  string
		spec                                  v1alpha1.NodePoolSpec
		policy, consolidateAfter, expireAfter string
		budgets                               []v1alpha1.Budget
		ref                                   *v1alpha1.NodeClassReference
	}{
		{
			name: "empty pool gets every default",
			spec: v1alpha1.NodePoolSpec{Template: v1alpha1.NodeClaimTemplate{Spec: v1alpha1.NodeClaimTemplateSpec{
				NodeClassRef: &v1alpha1.NodeClassReference{Name: "web"}}}},
			policy: "WhenEmptyOrUnderutilized", consolidateAfter: "0s", expireAfter: "720h0m0s",
			budgets: []v1alpha1.Budget{{Nodes: "10%"}},
			ref:     &v1alpha1.NodeClassReference{Group: "stowage.dev", Kind: "NodeClass", Name: "web"},
		},
		{
			name: "values the user set are kept, Never included",
			spec: v1alpha1.NodePoolSpec{
				Template: v1alpha1.NodeClaimTemplate{Spec: v1alpha1.NodeClaimTemplateSpec{
					NodeClassRef: &v1alpha1.NodeClassReference{Group: "other.example.com", Kind: "Other", Name: "web"},
					ExpireAfter:  ptr.To(v1alpha1.MustParseDuration("Never")),
				}},
				Disruption: v1alpha1.Disruption{ConsolidationPolicy: "WhenEmpty", ConsolidateAfter: ptr.To(v1alpha1.MustParseDuration("Never")),
					Budgets: []v1alpha1.Budget{{Nodes: "0", Schedule: ptr.To("@daily"), Duration: &metav1.Duration{Duration: time.Hour}}}},
			},
			policy: "WhenEmpty", consolidateAfter: "Never", expireAfter: "Never",
			budgets: []v1alpha1.Budget{{Nodes: "0", Schedule: ptr.To("@daily"), Duration: &metav1.Duration{Duration: time.Hour}}},
			ref:     &v1alpha1.NodeClassReference{Group: "other.example.com", Kind: "Other", Name: "web"},
		},
		{
			name: "a missing nodeClassRef stays missing for validation to report",
			spec: v1alpha1.NodePoolSpec{Disruption: v1alpha1.Disruption{ConsolidateAfter: ptr.To(v1alpha1.MustParseDuration("30s"))},
				Template: v1alpha1.NodeClaimTemplate{Spec: v1alpha1.NodeClaimTemplateSpec{ExpireAfter: ptr.To(v1alpha1.MustParseDuration("24h"))}}},
			policy: "WhenEmptyOrUnderutilized", consolidateAfter: "30s", expireAfter: "24h0m0s",
			budgets: []v1alpha1.Budget{{Nodes: "10%"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			np := &v1alpha1.NodePool{Spec: tc.spec}
			np.SetDefaults()
			d := np.Spec.Disruption
			if d.ConsolidationPolicy != tc.policy {
				t.Errorf("consolidationPolicy = %q, want %q", d.ConsolidationPolicy, tc.policy)
			}
			if got := duration(t, d.ConsolidateAfter); got != tc.consolidateAfter {
				t.Errorf("consolidateAfter = %s, want %s", got, tc.consolidateAfter)
			}
			if got := duration(t, np.Spec.Template.Spec.ExpireAfter); got != tc.expireAfter {
				t.Errorf("expireAfter = %s, want %s", got, tc.expireAfter)
			}
			if !reflect.DeepEqual(d.Budgets, tc.budgets) {
				t.Errorf("budgets = %+v, want %+v", d.Budgets, tc.budgets)
			}
			if !reflect.DeepEqual(np.Spec.Template.Spec.NodeClassRef, tc.ref) {
				t.Errorf("nodeClassRef = %+v, want %+v", np.Spec.Template.Spec.NodeClassRef, tc.ref)
			}
			again := np.DeepCopy()
			again.SetDefaults()
			if !reflect.DeepEqual(again, np) {
				t.Errorf("SetDefaults is not idempotent:\n%+v\n%+v", again, np)
			}
		})
	}
}

func TestNodeClassDefaultsRequireIMDSv2(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   *v1alpha1.MetadataOptions
		want v1alpha1.MetadataOptions
	}{
		{"unset: IMDSv2 required, hop limit 1, IPv4 only", nil,
			v1alpha1.MetadataOptions{HTTPEndpoint: ptr.To("enabled"), HTTPProtocolIPv6: ptr.To("disabled"), HTTPPutResponseHopLimit: ptr.To[int64](1), HTTPTokens: ptr.To("required")}},
		{"empty: the same", &v1alpha1.MetadataOptions{},
			v1alpha1.MetadataOptions{HTTPEndpoint: ptr.To("enabled"), HTTPProtocolIPv6: ptr.To("disabled"), HTTPPutResponseHopLimit: ptr.To[int64](1), HTTPTokens: ptr.To("required")}},
		{"user choices are kept, the rest filled", &v1alpha1.MetadataOptions{HTTPTokens: ptr.To("optional"), HTTPPutResponseHopLimit: ptr.To[int64](2)},
			v1alpha1.MetadataOptions{HTTPEndpoint: ptr.To("enabled"), HTTPProtocolIPv6: ptr.To("disabled"), HTTPPutResponseHopLimit: ptr.To[int64](2), HTTPTokens: ptr.To("optional")}},
		{"everything set is kept", &v1alpha1.MetadataOptions{HTTPEndpoint: ptr.To("disabled"), HTTPProtocolIPv6: ptr.To("enabled"), HTTPPutResponseHopLimit: ptr.To[int64](3), HTTPTokens: ptr.To("required")},
			v1alpha1.MetadataOptions{HTTPEndpoint: ptr.To("disabled"), HTTPProtocolIPv6: ptr.To("enabled"), HTTPPutResponseHopLimit: ptr.To[int64](3), HTTPTokens: ptr.To("required")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nc := validNodeClass()
			nc.Spec.MetadataOptions = tc.in
			nc.SetDefaults()
			if got := nc.Spec.MetadataOptions; got == nil || !reflect.DeepEqual(*got, tc.want) {
				t.Errorf("metadataOptions = %s, want %s", render(got), render(&tc.want))
			}
			if errs := nc.Validate(); len(errs) != 0 {
				t.Errorf("defaulted NodeClass does not validate: %v", errs)
			}
		})
	}
}

func TestDefaultedNodePoolValidates(t *testing.T) {
	np := &v1alpha1.NodePool{Spec: v1alpha1.NodePoolSpec{Template: v1alpha1.NodeClaimTemplate{Spec: v1alpha1.NodeClaimTemplateSpec{
		NodeClassRef: &v1alpha1.NodeClassReference{Name: "web"}}}}}
	np.SetDefaults()
	if errs := np.Validate(); len(errs) != 0 {
		t.Errorf("defaulted NodePool does not validate: %v", errs)
	}
}

func render(m *v1alpha1.MetadataOptions) string {
	if m == nil {
		return "<nil>"
	}
	s := func(p *string) string {
		if p == nil {
			return "<unset>"
		}
		return *p
	}
	hop := "<unset>"
	if m.HTTPPutResponseHopLimit != nil {
		hop = strconv.FormatInt(*m.HTTPPutResponseHopLimit, 10)
	}
	return "{httpEndpoint: " + s(m.HTTPEndpoint) + ", httpProtocolIPv6: " + s(m.HTTPProtocolIPv6) + ", hopLimit: " + hop + ", httpTokens: " + s(m.HTTPTokens) + "}"
}
