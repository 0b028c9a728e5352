package provider

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Read rebuilds the configuration from the role as it is: the identity from
// its trust policy, the policy from its inline policy, the association from
// EKS. Anything changed by hand shows as a change to undo in the next plan.
func (r *controllerRoleResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var m controllerRoleModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	cfg, ok := r.aws(ctx, &resp.Diagnostics)
	if !ok || resp.Diagnostics.HasError() {
		return
	}
	c := iam.NewFromConfig(cfg)
	got, err := c.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(m.ID.ValueString())})
	if isNotFound(err) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Reading the controller role", err.Error())
		return
	}
	role := got.Role
	m.Name, m.Path, m.ARN, m.UniqueID = m.ID, types.StringValue(aws.ToString(role.Path)), types.StringValue(aws.ToString(role.Arn)),
		types.StringValue(aws.ToString(role.RoleId))
	m.Description, m.MaxSession = types.StringPointerValue(role.Description), types.Int64Value(int64(aws.ToInt32(role.MaxSessionDuration)))
	tags := map[string]string{}
	for _, t := range role.Tags {
		tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	m.Tags = mapValue(tags, m.Tags)
	trust := decodePolicy(role.AssumeRolePolicyDocument)
	m.readIdentity(trust)
	if !sameJSON(trust, m.TrustPolicyJSON.ValueString()) {
		m.TrustPolicyJSON = types.StringValue(trust)
	}
	pol, err := c.GetRolePolicy(ctx, &iam.GetRolePolicyInput{RoleName: m.ID.ValueStringPointer(), PolicyName: aws.String(controllerPolicyName)})
	switch {
	case isNotFound(err):
		m.PolicyJSON = types.StringValue("")
	case err != nil:
		resp.Diagnostics.AddError("Reading the controller's policy", err.Error())
		return
	case !sameJSON(decodePolicy(pol.PolicyDocument), m.PolicyJSON.ValueString()):
		m.PolicyJSON = types.StringValue(decodePolicy(pol.PolicyDocument))
	}
	if err := r.readAssociation(ctx, cfg, &m); err != nil {
		resp.Diagnostics.AddError("Reading the Pod Identity association", err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// readIdentity reads IRSA's provider and service account, or Pod Identity's
// cluster, from a trust policy of the shape this resource writes; any other
// shape leaves them as they were.
func (m *controllerRoleModel) readIdentity(trust string) {
	var doc struct {
		Statement []struct {
			Principal map[string]any
			Condition map[string]map[string]any
		}
	}
	if json.Unmarshal([]byte(trust), &doc) != nil || len(doc.Statement) != 1 {
		return
	}
	s := doc.Statement[0]
	if fed, ok := s.Principal["Federated"].(string); ok {
		m.OIDCProviderARN, m.PodIdentityCluster = types.StringValue(fed), types.StringNull()
		for k, v := range s.Condition["StringEquals"] {
			sub, _ := v.(string)
			if rest, ok := strings.CutPrefix(sub, "system:serviceaccount:"); ok && strings.HasSuffix(k, ":sub") {
				ns, sa, _ := strings.Cut(rest, ":")
				m.Namespace, m.ServiceAccount = types.StringValue(ns), types.StringValue(sa)
			}
		}
		return
	}
	if arn := clusterARNOf(trust); arn != "" {
		m.PodIdentityCluster, m.OIDCProviderARN = types.StringValue(arn[strings.LastIndex(arn, "/")+1:]), types.StringNull()
	}
}

// readAssociation finds the Pod Identity association that gives the role to
// its service account; none leaves the id empty, for the plan to make it.
func (r *controllerRoleResource) readAssociation(ctx context.Context, cfg aws.Config, m *controllerRoleModel) error {
	if m.PodIdentityCluster.IsNull() {
		m.AssociationID = types.StringValue("")
		return nil
	}
	c := eks.NewFromConfig(cfg)
	cluster := m.PodIdentityCluster.ValueString()
	in := &eks.ListPodIdentityAssociationsInput{ClusterName: aws.String(cluster)}
	if !m.Namespace.IsNull() && m.AssociationID.ValueString() != "" {
		in.Namespace, in.ServiceAccount = m.Namespace.ValueStringPointer(), m.ServiceAccount.ValueStringPointer()
	}
	list, err := c.ListPodIdentityAssociations(ctx, in)
	if err != nil {
		return err
	}
	m.AssociationID = types.StringValue("")
	for _, a := range list.Associations {
		got, err := c.DescribePodIdentityAssociation(ctx, &eks.DescribePodIdentityAssociationInput{ClusterName: aws.String(cluster), AssociationId: a.AssociationId})
		if err != nil {
			return err
		}
		if aws.ToString(got.Association.RoleArn) == m.ARN.ValueString() {
			m.AssociationID = types.StringValue(aws.ToString(a.AssociationId))
			m.Namespace, m.ServiceAccount = types.StringPointerValue(a.Namespace), types.StringPointerValue(a.ServiceAccount)
		}
	}
	return nil
}

func (r *controllerRoleResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state controllerRoleModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	cfg, ok := r.aws(ctx, &resp.Diagnostics)
	if !ok || resp.Diagnostics.HasError() {
		return
	}
	c, name := iam.NewFromConfig(cfg), aws.String(state.ID.ValueString())
	if _, err := c.UpdateRole(ctx, &iam.UpdateRoleInput{RoleName: name, Description: aws.String(plan.Description.ValueString()),
		MaxSessionDuration: aws.Int32(int32(plan.MaxSession.ValueInt64()))}); err != nil { //nolint:gosec // validated range
		resp.Diagnostics.AddError("Updating the controller role", err.Error())
		return
	}
	if err := retagRole(ctx, c, *name, stringMap(ctx, state.Tags, &resp.Diagnostics), stringMap(ctx, plan.Tags, &resp.Diagnostics)); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("tags"), "Tagging the controller role", err.Error())
		return
	}
	trust, err := r.trustFor(ctx, cfg, plan)
	if err == nil && !sameJSON(trust, state.TrustPolicyJSON.ValueString()) {
		_, err = c.UpdateAssumeRolePolicy(ctx, &iam.UpdateAssumeRolePolicyInput{RoleName: name, PolicyDocument: aws.String(trust)})
	}
	if err != nil {
		resp.Diagnostics.AddError("Updating the controller role's trust policy", err.Error())
		return
	}
	if _, err := c.PutRolePolicy(ctx, &iam.PutRolePolicyInput{RoleName: name, PolicyName: aws.String(controllerPolicyName),
		PolicyDocument: aws.String(plan.PolicyJSON.ValueString())}); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("policy_json"), "Putting the controller's policy", err.Error())
		return
	}
	plan.TrustPolicyJSON, plan.ARN, plan.UniqueID = types.StringValue(trust), state.ARN, state.UniqueID
	if sameJSON(trust, state.TrustPolicyJSON.ValueString()) {
		plan.TrustPolicyJSON = state.TrustPolicyJSON
	}
	id, err := r.reassociate(ctx, cfg, plan, state)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("pod_identity_cluster_name"), "Associating the role with the service account", err.Error())
		return
	}
	plan.AssociationID = types.StringValue(id)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// reassociate keeps an association that still fits, and otherwise deletes
// the old one and makes the new one; it returns the association's id.
func (r *controllerRoleResource) reassociate(ctx context.Context, cfg aws.Config, plan, state controllerRoleModel) (string, error) {
	same := plan.PodIdentityCluster.Equal(state.PodIdentityCluster) && plan.Namespace.Equal(state.Namespace) && plan.ServiceAccount.Equal(state.ServiceAccount)
	if same && state.AssociationID.ValueString() != "" {
		return state.AssociationID.ValueString(), nil
	}
	if err := deleteAssociation(ctx, cfg, state); err != nil {
		return "", err
	}
	if plan.PodIdentityCluster.IsNull() {
		return "", nil
	}
	return r.associate(ctx, cfg, plan)
}

func deleteAssociation(ctx context.Context, cfg aws.Config, m controllerRoleModel) error {
	if m.AssociationID.ValueString() == "" || m.PodIdentityCluster.IsNull() {
		return nil
	}
	_, err := eks.NewFromConfig(cfg).DeletePodIdentityAssociation(ctx, &eks.DeletePodIdentityAssociationInput{
		ClusterName: m.PodIdentityCluster.ValueStringPointer(), AssociationId: m.AssociationID.ValueStringPointer()})
	if isNotFound(err) {
		return nil
	}
	return err
}

func (r *controllerRoleResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var m controllerRoleModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	cfg, ok := r.aws(ctx, &resp.Diagnostics)
	if !ok || resp.Diagnostics.HasError() {
		return
	}
	if err := deleteAssociation(ctx, cfg, m); err != nil {
		resp.Diagnostics.AddError("Deleting the Pod Identity association", err.Error())
		return
	}
	if err := deleteRole(ctx, iam.NewFromConfig(cfg), m.ID.ValueString()); err != nil {
		resp.Diagnostics.AddError("Deleting the controller role", err.Error())
	}
}
