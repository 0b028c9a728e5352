package aws

import (
	"context"
	"fmt"
	"net"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/stowage-dev/stowage/controller/aws/awserrors"
	"github.com/stowage-dev/stowage/controller/aws/sdk"
)

// ServiceCIDR reads the cluster's service CIDR from eks:DescribeCluster's
// kubernetesNetworkConfig: serviceIpv6Cidr on an IPv6 cluster (ipFamily
// ipv6), serviceIpv4Cidr otherwise. Nodes derive their cluster DNS from it.
func ServiceCIDR(ctx context.Context, api sdk.EKSAPI, cluster string) (string, error) {
	out, err := api.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: awssdk.String(cluster)})
	if err != nil {
		return "", fmt.Errorf("describing EKS cluster %s: %w", cluster, awserrors.WrapUnauthorized(err))
	}
	var n ekstypes.KubernetesNetworkConfigResponse
	if out.Cluster != nil && out.Cluster.KubernetesNetworkConfig != nil {
		n = *out.Cluster.KubernetesNetworkConfig
	}
	cidr, field := awssdk.ToString(n.ServiceIpv4Cidr), "serviceIpv4Cidr"
	if n.IpFamily == ekstypes.IpFamilyIpv6 {
		cidr, field = awssdk.ToString(n.ServiceIpv6Cidr), "serviceIpv6Cidr"
	}
	if _, _, err := net.ParseCIDR(cidr); err != nil {
		return "", fmt.Errorf("EKS cluster %s (ipFamily %q) reports kubernetesNetworkConfig.%s %q, not a CIDR", cluster, n.IpFamily, field, cidr)
	}
	return cidr, nil
}

// ClusterARN reads the cluster's ARN, which ARC names its zonal shifts by.
func ClusterARN(ctx context.Context, api sdk.EKSAPI, cluster string) (string, error) {
	out, err := api.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: awssdk.String(cluster)})
	if err != nil {
		return "", fmt.Errorf("describing EKS cluster %s: %w", cluster, awserrors.WrapUnauthorized(err))
	}
	if out.Cluster == nil || awssdk.ToString(out.Cluster.Arn) == "" {
		return "", fmt.Errorf("EKS cluster %s: DescribeCluster reports no arn", cluster)
	}
	return awssdk.ToString(out.Cluster.Arn), nil
}
