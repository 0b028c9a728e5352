package awsemu

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
)

// EKSCluster is an emulated EKS cluster: what eks:DescribeCluster reports,
// typically the address and CA of a test's kube-apiserver.
type EKSCluster struct {
	Name string
	// Endpoint is the API server's URL.
	Endpoint string
	// CAData is the PEM certificate of the API server's CA.
	CAData []byte
	// Version is the Kubernetes minor version, e.g. 1.37.
	Version string
	// ServiceIPv4CIDR, ServiceIPv6CIDR and IPFamily (ipv4 or ipv6) are the
	// cluster's kubernetesNetworkConfig; an IPv6 cluster has both CIDRs.
	ServiceIPv4CIDR, ServiceIPv6CIDR, IPFamily string
	// ZonalShift is the cluster's zonalShiftConfig.enabled: ARC manages the
	// cluster (its ARN), so that zonal shifts of it may be started.
	ZonalShift bool
	// ZonalAutoshift is ARC's zonal autoshift status of the cluster
	// (ENABLED): AWS's autoshifts then apply to it.
	ZonalAutoshift bool
}

// AddEKSCluster registers (or replaces) a cluster.
func (e *Emulator) AddEKSCluster(c EKSCluster) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.eksClusters == nil {
		e.eksClusters = map[string]EKSCluster{}
	}
	e.eksClusters[c.Name] = c
}

// eksAction names the EKS REST operation a request calls; EKS speaks JSON over
// REST (GET /clusters/{name} is DescribeCluster), not X-Amz-Target.
func eksAction(r *http.Request) string {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if r.Method == http.MethodGet && len(parts) == 2 && parts[0] == "clusters" {
		return "DescribeCluster"
	}
	if a := eksAccessAction(r); a != "" {
		return a
	}
	return r.Method + " " + r.URL.Path
}

func (e *Emulator) serveEKS(w http.ResponseWriter, req request) {
	switch req.action {
	case "DescribeCluster":
		name, _ := url.PathUnescape(strings.TrimPrefix(strings.Trim(req.path, "/"), "clusters/"))
		out, apiErr := e.describeCluster(name)
		if apiErr != nil {
			writeRESTError(w, http.StatusNotFound, apiErr)
			return
		}
		writeJSON(w, "eks", out)
	default:
		if e.serveEKSAccess(w, req) {
			return
		}
		writeRESTError(w, http.StatusNotFound, &APIError{"UnknownOperationException", "unknown EKS operation " + req.action})
	}
}

// describeCluster answers eks:DescribeCluster; an unknown name is a
// ResourceNotFoundException, as EKS answers.
func (e *Emulator) describeCluster(name string) (any, *APIError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	c, ok := e.eksClusters[name]
	if !ok {
		return nil, &APIError{"ResourceNotFoundException", "No cluster found for name: " + name + "."}
	}
	arn := "arn:aws:eks:" + e.cfg.Region + ":" + e.cfg.AccountID + ":cluster/" + name
	return map[string]any{"cluster": map[string]any{
		"name": c.Name, "arn": arn, "endpoint": c.Endpoint, "version": c.Version, "status": "ACTIVE",
		"platformVersion":         "eks.1",
		"createdAt":               float64(e.clk.Now().Unix()),
		"certificateAuthority":    map[string]string{"data": base64.StdEncoding.EncodeToString(c.CAData)},
		"roleArn":                 "arn:aws:iam::" + e.cfg.AccountID + ":role/eks-cluster",
		"kubernetesNetworkConfig": networkConfig(c),
		"zonalShiftConfig":        map[string]bool{"enabled": c.ZonalShift},
	}}, nil
}

// networkConfig is DescribeCluster's kubernetesNetworkConfig: the fields set.
func networkConfig(c EKSCluster) map[string]string {
	out := map[string]string{}
	for k, v := range map[string]string{"serviceIpv4Cidr": c.ServiceIPv4CIDR, "serviceIpv6Cidr": c.ServiceIPv6CIDR, "ipFamily": c.IPFamily} {
		if v != "" {
			out[k] = v
		}
	}
	return out
}

// writeRESTError writes a REST-JSON error: the code in X-Amzn-ErrorType, the
// message in the body.
func writeRESTError(w http.ResponseWriter, status int, e *APIError) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", e.Code)
	w.WriteHeader(status)
	out, _ := json.Marshal(map[string]string{"message": e.Message}) //nolint:errchkjson // strings
	_, _ = w.Write(out)
}
