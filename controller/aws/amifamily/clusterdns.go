package amifamily

import (
	"fmt"
	"net/netip"
	"strings"
)

// ClusterDNS is the address of the cluster's DNS service that nodeadm
// derives from the service CIDR (nodeadm's api.GetClusterDns): for IPv4 the
// CIDR's address with its last octet 10 (10.100.0.0/16 gives 10.100.0.10),
// for IPv6 the CIDR's address followed by "a" (fd00:10:96::/112 gives
// fd00:10:96::a), which is where EKS puts CoreDNS.
func ClusterDNS(cidr string) (string, error) {
	prefix, err := netip.ParsePrefix(cidr)
	if err != nil {
		return "", fmt.Errorf("%q is not a CIDR: use the cluster's service CIDR, e.g. 10.100.0.0/16", cidr)
	}
	addr, _, _ := strings.Cut(cidr, "/")
	if prefix.Addr().Is4() {
		return addr[:strings.LastIndex(addr, ".")] + ".10", nil
	}
	return addr + "a", nil
}
