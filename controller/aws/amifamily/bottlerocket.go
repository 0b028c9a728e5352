package amifamily

import (
	"fmt"

	"github.com/pelletier/go-toml/v2"
)

// bottlerocket is one TOML document: the NodeClass's settings, read with a
// TOML parser, with Stowage's laid over them key by key, as Karpenter does
// for Bottlerocket: the cluster (name, API server, CA, cluster DNS), the
// node labels and taints, and the NodeClass's kubelet block. Each table is
// declared once, whatever the NodeClass's TOML declared.
func bottlerocket(b Bootstrap) (Rendered, error) {
	doc := map[string]any{}
	if err := toml.Unmarshal([]byte(b.custom()), &doc); err != nil {
		return Rendered{}, fmt.Errorf("spec.userData is not TOML, as Bottlerocket's settings must be: %w", err)
	}
	user := copyTree(doc)
	ours, err := b.bottlerocketSettings()
	if err != nil {
		return Rendered{}, err
	}
	deepMerge(doc, ours)
	text, err := toml.Marshal(doc)
	if err != nil {
		return Rendered{}, fmt.Errorf("encoding Bottlerocket's settings: %w", err)
	}
	return Rendered{Text: string(text), Replaced: replaced(user, ours, "")}, nil
}

// bottlerocketSettings are Stowage's settings as Bottlerocket names them.
func (b Bootstrap) bottlerocketSettings() (map[string]any, error) {
	k := map[string]any{"cluster-name": b.Cluster.Name, "api-server": b.Cluster.Endpoint, "cluster-certificate": b.Cluster.CABundle}
	if err := b.setClusterDNS(k); err != nil {
		return nil, err
	}
	if len(b.Labels) > 0 {
		k["node-labels"] = stringTable(b.Labels)
	}
	if len(b.Taints) > 0 {
		taints := map[string]any{}
		for _, t := range b.Taints {
			list, _ := taints[t.Key].([]any)
			taints[t.Key] = append(list, t.Value+":"+string(t.Effect))
		}
		k["node-taints"] = taints
	}
	s := kubeletOf(b.Kubelet)
	setInt(k, "max-pods", s.MaxPods)
	setInt(k, "eviction-max-pod-grace-period", s.EvictionMaxPodGracePeriod)
	setInt(k, "image-gc-high-threshold-percent", s.ImageGCHighThresholdPercent)
	setInt(k, "image-gc-low-threshold-percent", s.ImageGCLowThresholdPercent)
	if s.CPUCFSQuota != nil {
		k["cpu-cfs-quota-enforced"] = *s.CPUCFSQuota
	}
	for name, m := range map[string]map[string]string{"kube-reserved": s.KubeReserved, "system-reserved": s.SystemReserved,
		"eviction-hard": s.EvictionHard, "eviction-soft": s.EvictionSoft, "eviction-soft-grace-period": s.EvictionSoftGracePeriod} {
		if len(m) > 0 {
			k[name] = stringTable(m)
		}
	}
	settings := map[string]any{"kubernetes": k}
	if b.InstanceStoreRAID0 {
		settings["bootstrap-commands"] = map[string]any{"k8s-ephemeral-storage": map[string]any{
			"commands": []any{[]any{"apiclient", "ephemeral-storage", "init"},
				[]any{"apiclient", "ephemeral-storage", "bind", "--dirs", "/var/lib/containerd", "/var/lib/kubelet", "/var/log/pods"}},
			"mode": "always", "essential": true}}
	}
	return map[string]any{"settings": settings}, nil
}

// setClusterDNS sets cluster-dns-ip: the NodeClass's clusterDNS, else the
// address nodeadm's rule derives from the service CIDR; with neither,
// Bottlerocket derives it itself.
func (b Bootstrap) setClusterDNS(k map[string]any) error {
	switch dns := b.Kubelet; {
	case dns != nil && len(dns.ClusterDNS) == 1:
		k["cluster-dns-ip"] = dns.ClusterDNS[0]
	case dns != nil && len(dns.ClusterDNS) > 1:
		k["cluster-dns-ip"] = toAnyList(dns.ClusterDNS)
	case b.Cluster.CIDR != "":
		ip, err := ClusterDNS(b.Cluster.CIDR)
		if err != nil {
			return fmt.Errorf("the cluster's service CIDR: %w", err)
		}
		k["cluster-dns-ip"] = ip
	}
	return nil
}

func setInt(m map[string]any, key string, v *int32) {
	if v != nil {
		m[key] = int64(*v)
	}
}

func stringTable(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func toAnyList(list []string) []any {
	out := make([]any, len(list))
	for i, s := range list {
		out[i] = s
	}
	return out
}

// copyTree copies the tables of a document; other values are shared.
func copyTree(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			v = copyTree(sub)
		}
		out[k] = v
	}
	return out
}
