package aws

import (
	"context"
	"encoding/base64"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/aws/amifamily"
	"github.com/stowage-dev/stowage/controller/aws/instance"
	"github.com/stowage-dev/stowage/controller/aws/launchtemplate"
	"github.com/stowage-dev/stowage/controller/aws/subnet"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/scheduling"
)

// launchPlan is one fleet request and what its overrides stand for.
type launchPlan struct {
	req          instance.LaunchRequest
	types        map[string]*cloudprovider.InstanceType // instance type -> type
	images       map[string]string                      // instance type -> image id
	reservations map[string]string                      // instance type/zone -> capacity reservation id
}

func (c *CloudProvider) plan(ctx context.Context, claim *v1alpha1.NodeClaim, nc *v1alpha1.NodeClass, r *Resolved, candidates []*cloudprovider.InstanceType, reqs scheduling.Requirements) (*launchPlan, error) {
	zones := subnet.PerZone(r.Subnets)
	p := &launchPlan{req: instance.LaunchRequest{Claim: claim.Name, Tags: c.instanceTags(claim, nc, r)},
		types: map[string]*cloudprovider.InstanceType{}, images: map[string]string{}, reservations: map[string]string{}}
	p.req.CapacityType = c.chooseCapacityType(candidates, reqs, zones)
	if p.req.CapacityType == "" {
		return p, nil
	}
	templates := map[[2]string]string{} // (image id, reservation id) -> template name
	offers, block := oneMarket(c.rank(candidates, p.req.CapacityType, reqs, zones, instance.MaxOverrides))
	p.req.CapacityBlock = block
	for _, o := range offers {
		ami, ok := amifamily.Select(r.AMIs, o.it)
		if !ok {
			continue
		}
		key := [2]string{ami.ID, o.reservation}
		lt, ok := templates[key]
		if !ok {
			cfg, err := c.templateConfig(claim, nc, r, ami.ID, o.reservation)
			if err != nil {
				return nil, err
			}
			cfg.CapacityBlock = o.block
			name, err := c.templates.Ensure(ctx, cfg)
			if err != nil {
				return nil, c.launchError(err)
			}
			templates[key], lt = name, name
		}
		p.req.Overrides = append(p.req.Overrides, instance.Override{InstanceType: o.it.Name, Zone: o.zone,
			SubnetID: zones[o.zone].ID, LaunchTemplate: lt, Price: o.price, ReservationID: o.reservation})
		p.types[o.it.Name], p.images[o.it.Name] = o.it, ami.ID
		if o.reservation != "" {
			p.reservations[o.it.Name+"/"+o.zone] = o.reservation
		}
	}
	return p, nil
}

func (c *CloudProvider) instanceTags(claim *v1alpha1.NodeClaim, nc *v1alpha1.NodeClass, r *Resolved) map[string]string {
	tags := map[string]string{}
	for k, v := range nc.Spec.Tags {
		tags[k] = v
	}
	tags[instance.ClusterTag(c.opts.Cluster.Name)] = "owned"
	tags[instance.TagNodePool] = claim.Labels[v1alpha1.LabelNodePool]
	tags[instance.TagNodeClaim] = claim.Name
	tags[instance.TagNodeClass] = nc.Name
	tags[v1alpha1.AnnotationNodeClassHash] = v1alpha1.NodeClassHash(nc)
	tags[instance.TagName] = claim.Name
	return tags
}

// templateConfig is the launch template of a claim's nodes from an image:
// everything the NodeClass fixes on the instance, and the user data.
func (c *CloudProvider) templateConfig(claim *v1alpha1.NodeClaim, nc *v1alpha1.NodeClass, r *Resolved, imageID, reservation string) (launchtemplate.Config, error) {
	cfg := launchtemplate.Config{ImageID: imageID, InstanceProfile: r.InstanceProfile, HTTPTokens: "required",
		HopLimit: 1, HTTPEndpoint: "enabled", HTTPProtocolIPv6: "disabled", BlockDevices: nc.Spec.BlockDeviceMappings,
		Tags: nc.Spec.Tags, CapacityReservationID: reservation, AssociatePublicIP: nc.Spec.AssociatePublicIPAddress}
	for _, g := range r.SecurityGroups {
		cfg.SecurityGroups = append(cfg.SecurityGroups, g.ID)
	}
	if m := nc.Spec.MetadataOptions; m != nil {
		cfg.HTTPTokens = deref(m.HTTPTokens, cfg.HTTPTokens)
		cfg.HTTPEndpoint = deref(m.HTTPEndpoint, cfg.HTTPEndpoint)
		cfg.HTTPProtocolIPv6 = deref(m.HTTPProtocolIPv6, cfg.HTTPProtocolIPv6)
		if m.HTTPPutResponseHopLimit != nil {
			cfg.HopLimit = int32(*m.HTTPPutResponseHopLimit) //nolint:gosec // validated 1..64
		}
	}
	if nc.Spec.DetailedMonitoring != nil {
		cfg.Monitoring = *nc.Spec.DetailedMonitoring
	}
	ud, err := c.userData(claim, nc)
	if err != nil {
		return cfg, cloudprovider.NewNodeClassNotReadyError(fmt.Errorf("nodeclass %s: %w", nc.Name, err))
	}
	cfg.UserData = base64.StdEncoding.EncodeToString([]byte(ud.Text))
	return cfg, nil
}

// userData renders the user data a claim's nodes boot with.
func (c *CloudProvider) userData(claim *v1alpha1.NodeClaim, nc *v1alpha1.NodeClass) (amifamily.Rendered, error) {
	b := bootstrap(c.opts.Cluster, nc)
	b.Labels = nodeLabels(claim)
	b.Taints = append(append([]corev1.Taint{v1alpha1.UnregisteredNoExecuteTaint}, claim.Spec.Taints...), claim.Spec.StartupTaints...)
	return amifamily.Render(amifamily.Family(nc), b)
}

// bootstrap is what every node of the NodeClass boots with, before its
// pool's labels and taints.
func bootstrap(cluster amifamily.Cluster, nc *v1alpha1.NodeClass) amifamily.Bootstrap {
	return amifamily.Bootstrap{Cluster: cluster, Kubelet: nc.Spec.Kubelet, CustomData: nc.Spec.UserData,
		InstanceStoreRAID0: nc.Spec.InstanceStorePolicy != nil && *nc.Spec.InstanceStorePolicy == v1alpha1.InstanceStorePolicyRAID0}
}

// nodeLabels are the claim's labels the kubelet registers with: the pool's own,
// not the ones Stowage derives from the instance (nor their Karpenter copies).
func nodeLabels(claim *v1alpha1.NodeClaim) map[string]string {
	out := map[string]string{}
	for k, v := range claim.Labels {
		if (!v1alpha1.WellKnownLabels[k] && v1alpha1.KarpenterLabelAliases[k] == "") || k == v1alpha1.LabelNodePool {
			out[k] = v
		}
	}
	return out
}

func deref(s *string, def string) string {
	if s == nil || *s == "" {
		return def
	}
	return *s
}
