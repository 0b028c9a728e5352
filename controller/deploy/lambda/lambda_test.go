package lambda_test

import (
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/stowage-dev/stowage/controller/deploy"
	"github.com/stowage-dev/stowage/controller/deploy/lambda"
)

// TestLambdaRoleIsExactlyTheDocumentedOne: get, list and update on Nodes,
// list and update on NodeClaims, bound to the Lambda's group, and not among
// the controller's manifests.
func TestLambdaRoleIsExactlyTheDocumentedOne(t *testing.T) {
	objs, err := lambda.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	var role *rbacv1.ClusterRole
	var binding *rbacv1.ClusterRoleBinding
	for _, o := range objs {
		switch v := o.(type) {
		case *rbacv1.ClusterRole:
			role = v
		case *rbacv1.ClusterRoleBinding:
			binding = v
		default:
			t.Errorf("unexpected %T %s", o, o.GetName())
		}
	}
	if role == nil || binding == nil {
		t.Fatalf("want a ClusterRole and a ClusterRoleBinding, got %d objects", len(objs))
	}
	want := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "update"}},
		{APIGroups: []string{"stowage.dev"}, Resources: []string{"nodeclaims"}, Verbs: []string{"list", "update"}},
	}
	if role.Name != lambda.ClusterRole || !slices.EqualFunc(role.Rules, want, sameRule) {
		t.Errorf("ClusterRole %s rules %+v, want exactly %+v", role.Name, role.Rules, want)
	}
	if binding.RoleRef.Name != lambda.ClusterRole || len(binding.Subjects) != 1 ||
		binding.Subjects[0].Kind != rbacv1.GroupKind || binding.Subjects[0].Name != lambda.Group {
		t.Errorf("binding %+v, want the ClusterRole bound to group %s", binding, lambda.Group)
	}
	ms, err := deploy.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Object.GetName() == lambda.ClusterRole {
			t.Errorf("%s is among the controller's manifests (%s)", lambda.ClusterRole, m.File)
		}
	}
}

func sameRule(a, b rbacv1.PolicyRule) bool {
	return slices.Equal(a.Verbs, b.Verbs) && slices.Equal(a.Resources, b.Resources) && slices.Equal(a.APIGroups, b.APIGroups) &&
		len(a.ResourceNames)+len(a.NonResourceURLs) == 0
}
