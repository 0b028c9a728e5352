package clusterautoscaler

import (
	"errors"
	"fmt"
	"slices"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// nodeClasses adds one NodeClass per image family the groups use and returns
// their names by family: the family's latest EKS image, the groups' subnets
// by id (or the discovery tag when no group names them), the cluster's
// security group by the tag EKS puts on it, and the nodes' role.
func (p *Proposal) nodeClasses(groups []*NodeGroup, o Options) (map[string]string, error) {
	cluster, role := o.Cluster, o.NodeRole
	for _, g := range groups {
		if cluster == "" {
			cluster = g.Cluster
		}
		if role == "" {
			role = g.NodeRole
		}
	}
	var errs []error
	if cluster == "" {
		errs = append(errs, errors.New("no cluster name: the input names none (describe-nodegroup's clusterName, or an Auto Scaling group's k8s.io/cluster-autoscaler/<cluster> tag); pass --cluster-name"))
	}
	if role == "" {
		errs = append(errs, errors.New("no node role: only managed node groups name theirs; pass --node-role with the IAM role (name) of the nodes"))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	names := map[string]string{}
	for _, g := range groups {
		if _, ok := names[g.AMIFamily]; ok {
			continue
		}
		names[g.AMIFamily] = g.AMIFamily
		nc := &v1alpha1.NodeClass{TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: "NodeClass"},
			ObjectMeta: metav1.ObjectMeta{Name: g.AMIFamily}}
		nc.Spec.Role = role
		nc.Spec.AMISelectorTerms = []v1alpha1.AMISelectorTerm{{Alias: g.AMIFamily + "@latest"}}
		nc.Spec.SecurityGroupSelectorTerms = []v1alpha1.SecurityGroupSelectorTerm{{Tags: map[string]string{"kubernetes.io/cluster/" + cluster: "owned"}}}
		subnets := familySubnets(groups, g.AMIFamily)
		for _, s := range subnets {
			nc.Spec.SubnetSelectorTerms = append(nc.Spec.SubnetSelectorTerms, v1alpha1.SelectorTerm{ID: s})
		}
		if len(subnets) == 0 {
			nc.Spec.SubnetSelectorTerms = []v1alpha1.SelectorTerm{{Tags: map[string]string{"stowage.dev/discovery": cluster}}}
			p.Notes[nc.Name] = append(p.Notes[nc.Name], "no node group names its subnets: tag the nodes' subnets stowage.dev/discovery="+cluster)
		}
		p.Notes[nc.Name] = append(p.Notes[nc.Name], "security groups: the EKS cluster security group (tagged kubernetes.io/cluster/"+cluster+"=owned); add the node groups' own if they have any")
		check := nc.DeepCopy()
		check.SetDefaults()
		for _, e := range check.Validate() {
			errs = append(errs, fmt.Errorf("proposed NodeClass %s: %s", nc.Name, e))
		}
		p.NodeClasses = append(p.NodeClasses, nc)
	}
	return names, errors.Join(errs...)
}

func familySubnets(groups []*NodeGroup, family string) []string {
	var out []string
	for _, g := range groups {
		if g.AMIFamily != family {
			continue
		}
		for _, s := range g.Subnets {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	sort.Strings(out)
	return out
}
