package crds_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/stowage-dev/stowage/controller/apis/crds"
	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// The tests in this file read the embedded CRDs only, so they run without the
// API server's binaries.

// wantNames are the names each CRD must register.
var wantNames = map[string]apiextensionsv1.CustomResourceDefinitionNames{
	"nodepools.stowage.dev":   {Kind: "NodePool", ListKind: "NodePoolList", Plural: "nodepools", Singular: "nodepool", ShortNames: []string{"np"}, Categories: []string{"stowage"}},
	"nodeclaims.stowage.dev":  {Kind: "NodeClaim", ListKind: "NodeClaimList", Plural: "nodeclaims", Singular: "nodeclaim", ShortNames: []string{"nc"}, Categories: []string{"stowage"}},
	"nodeclasses.stowage.dev": {Kind: "NodeClass", ListKind: "NodeClassList", Plural: "nodeclasses", Singular: "nodeclass", ShortNames: []string{"nclass"}, Categories: []string{"stowage"}},
}

// wantColumns are each kind's printer columns, in order; the API server adds Name.
var wantColumns = map[string][]string{
	"NodeClaim": {"Type", "Capacity", "Zone", "Node", "Ready", "Age", "ID", "NodePool"},
	"NodePool":  {"NodeClass", "Nodes", "Ready", "Weight", "Age"},
	"NodeClass": {"Ready", "Age"},
}

func mustCRDs(t *testing.T) map[string]*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	list, err := crds.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	byKind := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, crd := range list {
		byKind[crd.Spec.Names.Kind] = crd
	}
	if len(byKind) != len(list) || len(list) != len(wantNames) {
		t.Fatalf("%d CRDs for %d kinds, want %d", len(list), len(byKind), len(wantNames))
	}
	return byKind
}

func TestCRDsAreClusterScopedWithStatus(t *testing.T) {
	for kind, crd := range mustCRDs(t) {
		want, ok := wantNames[crd.Name]
		switch {
		case !ok:
			t.Errorf("unexpected CRD %s", crd.Name)
		case crd.Spec.Group != v1alpha1.Group || crd.Spec.Scope != apiextensionsv1.ClusterScoped:
			t.Errorf("%s: group %s scope %s, want %s Cluster", kind, crd.Spec.Group, crd.Spec.Scope, v1alpha1.Group)
		case marshalJSON(t, crd.Spec.Names) != marshalJSON(t, want):
			t.Errorf("%s: names %+v, want %+v", kind, crd.Spec.Names, want)
		case len(crd.Spec.Versions) != 1:
			t.Errorf("%s: %d versions, want 1", kind, len(crd.Spec.Versions))
		}
		v := crd.Spec.Versions[0]
		if v.Name != v1alpha1.SchemeGroupVersion.Version || !v.Served || !v.Storage || v.Subresources == nil || v.Subresources.Status == nil {
			t.Errorf("%s: version %s served=%t storage=%t subresources=%+v, want v1alpha1 served and stored with a status subresource",
				kind, v.Name, v.Served, v.Storage, v.Subresources)
		}
	}
}

func TestCRDsDeclarePrinterColumnsOnExistingFields(t *testing.T) {
	for kind, crd := range mustCRDs(t) {
		v := crd.Spec.Versions[0]
		var names []string
		for _, c := range v.AdditionalPrinterColumns {
			names = append(names, c.Name)
			if err := resolves(v.Schema.OpenAPIV3Schema, c.JSONPath); err != "" {
				t.Errorf("%s column %s: %s", kind, c.Name, err)
			}
		}
		if !slices.Equal(names, wantColumns[kind]) {
			t.Errorf("%s columns %v, want %v", kind, names, wantColumns[kind])
		}
	}
}

var jsonPathFilter = regexp.MustCompile(`\[[^]]*\]`)

// resolves returns why path names no field of the schema, or "" when it does.
// Metadata paths are not checked: the CRD schema leaves metadata open.
func resolves(s *apiextensionsv1.JSONSchemaProps, path string) string {
	path = strings.TrimPrefix(jsonPathFilter.ReplaceAllString(path, ""), ".")
	if strings.HasPrefix(path, "metadata.") {
		return ""
	}
	for _, part := range strings.Split(path, ".") {
		if s = child(s, part); s == nil {
			return path + " has no field " + part
		}
	}
	return ""
}

// child steps into a property of s, looking through arrays and maps.
func child(s *apiextensionsv1.JSONSchemaProps, name string) *apiextensionsv1.JSONSchemaProps {
	for s.Items != nil && s.Items.Schema != nil {
		s = s.Items.Schema
	}
	if p, ok := s.Properties[name]; ok {
		return &p
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		return s.AdditionalProperties.Schema
	}
	return nil
}

// schemaAt returns the schema of the dotted path under the CRD's root.
func schemaAt(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition, path string) *apiextensionsv1.JSONSchemaProps {
	t.Helper()
	s := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
	for _, part := range strings.Split(path, ".") {
		if s = child(s, part); s == nil {
			t.Fatalf("%s has no %s", crd.Name, path)
		}
	}
	return s
}

// walk calls f on every schema under s, with its path.
func walk(path string, s *apiextensionsv1.JSONSchemaProps, f func(string, *apiextensionsv1.JSONSchemaProps)) {
	f(path, s)
	for name, p := range s.Properties {
		walk(path+"."+name, &p, f)
	}
	if s.Items != nil && s.Items.Schema != nil {
		walk(path+"[]", s.Items.Schema, f)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		walk(path+"{}", s.AdditionalProperties.Schema, f)
	}
}

func TestEveryRuleHasAMessage(t *testing.T) {
	rules := 0
	for kind, crd := range mustCRDs(t) {
		walk(kind, crd.Spec.Versions[0].Schema.OpenAPIV3Schema, func(path string, s *apiextensionsv1.JSONSchemaProps) {
			for _, r := range s.XValidations {
				rules++
				if strings.TrimSpace(r.Message) == "" && r.MessageExpression == "" {
					t.Errorf("%s: rule %q has no message", path, r.Rule)
				}
			}
		})
	}
	if rules == 0 {
		t.Fatal("no CEL rules in the CRDs")
	}
}

// ruleSaying returns the rule at path whose message contains msg.
func ruleSaying(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition, path, msg string) string {
	t.Helper()
	for _, r := range schemaAt(t, crd, path).XValidations {
		if strings.Contains(r.Message, msg) {
			return r.Rule
		}
	}
	t.Fatalf("%s %s has no rule saying %q", crd.Name, path, msg)
	return ""
}

// TestCRDsMirrorGoValidation checks that the lists the CEL rules and enums spell
// out are the lists validation.go and labels.go use.
func TestCRDsMirrorGoValidation(t *testing.T) {
	all := mustCRDs(t)
	pool, class := all["NodePool"], all["NodeClass"]
	reqs := "spec.template.spec.requirements"
	checkEnum(t, schemaAt(t, pool, reqs+".operator"), v1alpha1.Operators)
	checkEnum(t, schemaAt(t, pool, "spec.disruption.budgets.reasons"), v1alpha1.DisruptionReasons)
	checkEnum(t, schemaAt(t, pool, "spec.disruption.consolidationPolicy"), v1alpha1.ConsolidationPolicies)

	restricted := []string{
		ruleSaying(t, pool, reqs, "must be well-known labels"),
		ruleSaying(t, pool, "spec.template.metadata.labels", "use your own prefix"),
	}
	for _, rule := range restricted {
		for key := range v1alpha1.WellKnownLabels {
			mustQuote(t, rule, key)
		}
		for key := range v1alpha1.KarpenterLabelAliases {
			mustQuote(t, rule, key)
		}
		for _, d := range append(slices.Clone(v1alpha1.RestrictedLabelDomains), v1alpha1.LabelDomainExceptions...) {
			mustQuote(t, rule, d)
		}
	}
	without := ruleSaying(t, pool, reqs, "Karpenter labels Stowage has no value for")
	for key := range v1alpha1.KarpenterLabelsWithoutEquivalent {
		mustQuote(t, without, key)
	}
	capacity := ruleOn(t, schemaAt(t, pool, reqs), "reserved, spot or on-demand")
	for key := range v1alpha1.KarpenterLabelAliases {
		if v1alpha1.CanonicalLabelKey(key) == v1alpha1.LabelCapacityType {
			mustQuote(t, capacity, key)
		}
	}
	for _, ct := range v1alpha1.CapacityTypes {
		mustQuote(t, capacity, ct)
	}
	for _, m := range []string{"evictionHard", "evictionSoft", "evictionSoftGracePeriod"} {
		signals := ruleSaying(t, class, "spec.kubelet."+m, "keys must be")
		for _, s := range v1alpha1.EvictionSignals {
			mustQuote(t, signals, s)
		}
	}
	checkEnum(t, schemaAt(t, class, "spec.amiFamily"), v1alpha1.AMIFamilyNames)
	checkEnum(t, schemaAt(t, class, "spec.instanceStorePolicy"), []string{v1alpha1.InstanceStorePolicyRAID0})
	alias := ruleSaying(t, class, "spec.amiSelectorTerms.alias", "family@version")
	for _, f := range v1alpha1.AMIFamilies {
		if !strings.Contains(alias, f) {
			t.Errorf("the alias rule %q does not allow %s", alias, f)
		}
	}
}

// ruleOn returns the rule of s itself whose message contains msg.
func ruleOn(t *testing.T, s *apiextensionsv1.JSONSchemaProps, msg string) string {
	t.Helper()
	for _, r := range s.Items.Schema.XValidations {
		if strings.Contains(r.Message, msg) {
			return r.Rule
		}
	}
	t.Fatalf("no item rule saying %q", msg)
	return ""
}

func checkEnum(t *testing.T, s *apiextensionsv1.JSONSchemaProps, want []string) {
	t.Helper()
	if s.Items != nil && s.Items.Schema != nil {
		s = s.Items.Schema
	}
	var got []string
	for _, e := range s.Enum {
		var v string
		if err := json.Unmarshal(e.Raw, &v); err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	if !slices.Equal(got, want) {
		t.Errorf("enum %v, want %v", got, want)
	}
}

func mustQuote(t *testing.T, rule, s string) {
	t.Helper()
	if !strings.Contains(rule, "'"+s+"'") {
		t.Errorf("rule does not name '%s': %s", s, rule)
	}
}

// TestCRDsDefaultAsSetDefaults checks the schema defaults against the constants
// SetDefaults uses.
func TestCRDsDefaultAsSetDefaults(t *testing.T) {
	all := mustCRDs(t)
	pool, class := all["NodePool"], all["NodeClass"]
	defaults := []struct {
		crd  *apiextensionsv1.CustomResourceDefinition
		path string
		want any
	}{
		{pool, "spec.disruption", map[string]any{}},
		{pool, "spec.disruption.consolidationPolicy", v1alpha1.ConsolidationPolicyWhenEmptyOrUnderutilized},
		{pool, "spec.disruption.consolidateAfter", v1alpha1.DefaultConsolidateAfter},
		{pool, "spec.disruption.returnAfter", v1alpha1.DefaultReturnAfter},
		{pool, "spec.disruption.repairAfter", v1alpha1.DefaultRepairAfter},
		{pool, "spec.disruption.budgets", []map[string]string{{"nodes": v1alpha1.DefaultBudgetNodes}}},
		{pool, "spec.disruption.budgets.nodes", v1alpha1.DefaultBudgetNodes},
		{pool, "spec.template.spec.expireAfter", v1alpha1.DefaultExpireAfter},
		{pool, "spec.template.spec.nodeClassRef.group", v1alpha1.Group},
		{pool, "spec.template.spec.nodeClassRef.kind", v1alpha1.DefaultNodeClassKind},
		{class, "spec.metadataOptions", map[string]any{
			"httpEndpoint": v1alpha1.DefaultHTTPEndpoint, "httpProtocolIPv6": v1alpha1.DefaultHTTPProtocolIPv6,
			"httpPutResponseHopLimit": v1alpha1.DefaultHTTPPutHopLimit, "httpTokens": v1alpha1.DefaultHTTPTokens}},
		{class, "spec.metadataOptions.httpEndpoint", v1alpha1.DefaultHTTPEndpoint},
		{class, "spec.metadataOptions.httpProtocolIPv6", v1alpha1.DefaultHTTPProtocolIPv6},
		{class, "spec.metadataOptions.httpPutResponseHopLimit", v1alpha1.DefaultHTTPPutHopLimit},
		{class, "spec.metadataOptions.httpTokens", v1alpha1.DefaultHTTPTokens},
	}
	for _, d := range defaults {
		s := schemaAt(t, d.crd, d.path)
		if s.Default == nil {
			t.Errorf("%s %s has no default, want %v", d.crd.Spec.Names.Kind, d.path, d.want)
			continue
		}
		if got, want := string(s.Default.Raw), marshalJSON(t, d.want); got != want {
			t.Errorf("%s %s defaults to %s, want %s", d.crd.Spec.Names.Kind, d.path, got, want)
		}
	}
}

func TestCRDsReturnsFreshCopies(t *testing.T) {
	first := mustCRDs(t)
	first["NodePool"].Spec.Versions[0].AdditionalPrinterColumns = nil
	if cols := mustCRDs(t)["NodePool"].Spec.Versions[0].AdditionalPrinterColumns; len(cols) == 0 {
		t.Fatal("changing one caller's CRDs changed the next caller's")
	}
}

func marshalJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
