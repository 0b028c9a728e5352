package awsemu_test

import (
	"context"
	"slices"
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/stowage-dev/stowage/internal/awsemu"
)

func TestAccessEntriesAndPodIdentityAssociationsThroughTheSDK(t *testing.T) {
	e := awsemu.New(awsemu.DefaultConfig())
	e.AddEKSCluster(awsemu.EKSCluster{Name: "prod", Endpoint: "https://127.0.0.1:6443", Version: "1.37"})
	c := eks.NewFromConfig(client(t, e))
	ctx := context.Background()
	role := "arn:aws:iam::123456789012:role/stowage-interruption"
	out, err := c.CreateAccessEntry(ctx, &eks.CreateAccessEntryInput{ClusterName: awssdk.String("prod"), PrincipalArn: awssdk.String(role),
		KubernetesGroups: []string{"stowage:interruption-lambda"}})
	if err != nil {
		t.Fatal(err)
	}
	if u := awssdk.ToString(out.AccessEntry.Username); u != "arn:aws:sts::123456789012:assumed-role/stowage-interruption/{{SessionName}}" {
		t.Errorf("default username %s", u)
	}
	_, err = c.CreateAccessEntry(ctx, &eks.CreateAccessEntryInput{ClusterName: awssdk.String("prod"), PrincipalArn: awssdk.String(role)})
	var inUse *ekstypes.ResourceInUseException
	if !errorsAs(err, &inUse) {
		t.Errorf("a second entry for the role: %v, want ResourceInUseException", err)
	}
	_, err = c.CreateAccessEntry(ctx, &eks.CreateAccessEntryInput{ClusterName: awssdk.String("prod"),
		PrincipalArn: awssdk.String("arn:aws:iam::123456789012:role/admin"), KubernetesGroups: []string{"system:masters"}})
	var invalid *ekstypes.InvalidParameterException
	if !errorsAs(err, &invalid) {
		t.Errorf("a system: group: %v, want InvalidParameterException", err)
	}
	if _, err := c.UpdateAccessEntry(ctx, &eks.UpdateAccessEntryInput{ClusterName: awssdk.String("prod"), PrincipalArn: awssdk.String(role),
		KubernetesGroups: []string{"stowage:interruption-lambda", "viewers"}}); err != nil {
		t.Fatal(err)
	}
	got, err := c.DescribeAccessEntry(ctx, &eks.DescribeAccessEntryInput{ClusterName: awssdk.String("prod"), PrincipalArn: awssdk.String(role)})
	if err != nil || !slices.Equal(got.AccessEntry.KubernetesGroups, []string{"stowage:interruption-lambda", "viewers"}) {
		t.Errorf("entry %v, %v", got, err)
	}
	if a, ok := e.AccessEntryFor("prod", "arn:aws:sts::123456789012:assumed-role/stowage-interruption/fn-session"); !ok || len(a.Groups) != 2 {
		t.Errorf("a session of the role maps to %v (%v), want the role's entry", a, ok)
	}
	assoc, err := c.CreatePodIdentityAssociation(ctx, &eks.CreatePodIdentityAssociationInput{ClusterName: awssdk.String("prod"),
		Namespace: awssdk.String("stowage"), ServiceAccount: awssdk.String("stowage"), RoleArn: awssdk.String("arn:aws:iam::123456789012:role/ctrl")})
	if err != nil {
		t.Fatal(err)
	}
	id := assoc.Association.AssociationId
	list, err := c.ListPodIdentityAssociations(ctx, &eks.ListPodIdentityAssociationsInput{ClusterName: awssdk.String("prod"), Namespace: awssdk.String("stowage")})
	if err != nil || len(list.Associations) != 1 || awssdk.ToString(list.Associations[0].AssociationId) != awssdk.ToString(id) {
		t.Errorf("associations %v, %v", list, err)
	}
	if _, err := c.DeletePodIdentityAssociation(ctx, &eks.DeletePodIdentityAssociationInput{ClusterName: awssdk.String("prod"), AssociationId: id}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteAccessEntry(ctx, &eks.DeleteAccessEntryInput{ClusterName: awssdk.String("prod"), PrincipalArn: awssdk.String(role)}); err != nil {
		t.Fatal(err)
	}
	_, err = c.DescribeAccessEntry(ctx, &eks.DescribeAccessEntryInput{ClusterName: awssdk.String("prod"), PrincipalArn: awssdk.String(role)})
	var nf *ekstypes.ResourceNotFoundException
	if !errorsAs(err, &nf) || len(e.PodIdentityAssociations()) != 0 {
		t.Errorf("after deleting: %v, associations %v", err, e.PodIdentityAssociations())
	}
	_, err = c.ListAccessEntries(ctx, &eks.ListAccessEntriesInput{ClusterName: awssdk.String("staging")})
	if !errorsAs(err, &nf) {
		t.Errorf("an unknown cluster: %v, want ResourceNotFoundException", err)
	}
}
