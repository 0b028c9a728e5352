package aws_test

import (
	"strings"
	"testing"

	stowaws "github.com/stowage-dev/stowage/controller/aws"
	"github.com/stowage-dev/stowage/internal/awsemu"
)

// TestServiceCIDRIsTheClusters: the service CIDR comes from
// eks:DescribeCluster through the real SDK: the IPv4 one, the IPv6 one on an
// IPv6 cluster; a cluster without one, or none at all, is an error naming it.
func TestServiceCIDRIsTheClusters(t *testing.T) {
	e := newEnv(t, awsemu.SmallCatalogue(), 1)
	e.emu.AddEKSCluster(awsemu.EKSCluster{Name: "v4", ServiceIPv4CIDR: "10.100.0.0/16", IPFamily: "ipv4"})
	e.emu.AddEKSCluster(awsemu.EKSCluster{Name: "v6", ServiceIPv4CIDR: "172.20.0.0/16", ServiceIPv6CIDR: "fd00:10:96::/108", IPFamily: "ipv6"})
	e.emu.AddEKSCluster(awsemu.EKSCluster{Name: "bare"})
	for cluster, want := range map[string]string{"v4": "10.100.0.0/16", "v6": "fd00:10:96::/108"} {
		if got, err := stowaws.ServiceCIDR(ctx(t), e.clients.EKS, cluster); err != nil || got != want {
			t.Errorf("%s: %q, %v; want %s", cluster, got, err, want)
		}
	}
	for cluster, want := range map[string]string{"bare": "kubernetesNetworkConfig.serviceIpv4Cidr \"\"", "gone": "ResourceNotFoundException"} {
		if _, err := stowaws.ServiceCIDR(ctx(t), e.clients.EKS, cluster); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one saying %s", cluster, err, want)
		}
	}
}

// The cluster's ARN, which ARC names its zonal shifts by, is DescribeCluster's.
func TestClusterARNIsTheClusters(t *testing.T) {
	e := newEnv(t, awsemu.SmallCatalogue(), 1)
	e.emu.AddEKSCluster(awsemu.EKSCluster{Name: cluster})
	if got, err := stowaws.ClusterARN(ctx(t), e.asRole.EKS, cluster); err != nil || got != clusterARN {
		t.Errorf("ClusterARN = %q, %v; want %s", got, err, clusterARN)
	}
	if _, err := stowaws.ClusterARN(ctx(t), e.clients.EKS, "gone"); err == nil || !strings.Contains(err.Error(), "ResourceNotFoundException") {
		t.Errorf("an unknown cluster: error %v, want ResourceNotFoundException", err)
	}
}
