package nodeboot

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// bottlerocketKubelet is the kubelet configuration Bottlerocket renders from
// its settings.kubernetes: max-pods (else the ENI rule over nodeadm's table,
// which Bottlerocket's own table agrees with), kube-reserved key by key
// (cpu by the host's CPUs, ephemeral-storage 1Gi and memory 11 MiB per pod
// of that max-pods plus 255 MiB where unset), system-reserved, eviction-hard
// (only the keys set, else the kubelet's defaults), cluster-dns-ip, and the
// node-labels and node-taints tables.
func (ud *UserData) bottlerocketKubelet(h Host) (*Kubelet, error) {
	k := table(table(ud.Settings, "settings"), "kubernetes")
	maxPods := BaseMaxPods(h.InstanceType, h.ENIs, "")
	if v, ok := k["max-pods"].(int64); ok {
		maxPods = v
	}
	reserved := map[string]any{"cpu": fmt.Sprintf("%dm", reservedMilliCPU(h.CPUs)), "ephemeral-storage": "1Gi",
		"memory": fmt.Sprintf("%dMi", 11*maxPods+255)}
	for key, v := range table(k, "kube-reserved") {
		reserved[key] = v
	}
	cfg := map[string]any{"kind": kubeletKind, "apiVersion": kubeletAPIVersion, "maxPods": maxPods, "kubeReserved": reserved,
		"evictionHard": map[string]any{"memory.available": "100Mi", "nodefs.available": "10%", "nodefs.inodesFree": "5%"}}
	if hard := table(k, "eviction-hard"); len(hard) > 0 {
		cfg["evictionHard"] = hard
	}
	if sys := table(k, "system-reserved"); len(sys) > 0 {
		cfg["systemReserved"] = sys
	}
	switch dns := k["cluster-dns-ip"].(type) {
	case string:
		cfg["clusterDNS"] = []any{dns}
	case []any:
		cfg["clusterDNS"] = dns
	}
	raw, _ := json.Marshal(cfg) //nolint:errchkjson // decoded TOML
	out := &Kubelet{Base: cfg, Labels: map[string]string{}}
	if err := decodeStrict(raw, &out.Config); err != nil {
		return nil, err
	}
	for key, v := range table(k, "node-labels") {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("settings.kubernetes.node-labels.%s is %T, not a string", key, v)
		}
		out.Labels[key] = s
	}
	var err error
	out.Taints, err = bottlerocketTaints(table(k, "node-taints"))
	return out, err
}

// bottlerocketTaints reads node-taints: key = ["value:Effect", ...].
func bottlerocketTaints(t map[string]any) ([]corev1.Taint, error) {
	var out []corev1.Taint
	for _, key := range slices.Sorted(maps.Keys(t)) {
		list, ok := t[key].([]any)
		if !ok {
			return nil, fmt.Errorf("settings.kubernetes.node-taints.%s is %T, not a list", key, t[key])
		}
		for _, item := range list {
			s, _ := item.(string)
			value, effect, ok := strings.Cut(s, ":")
			if !ok || effect == "" {
				return nil, fmt.Errorf("settings.kubernetes.node-taints.%s: %q is not value:Effect", key, s)
			}
			out = append(out, corev1.Taint{Key: key, Value: value, Effect: corev1.TaintEffect(effect)})
		}
	}
	return out, nil
}

// table is the table at key, empty when missing.
func table(m map[string]any, key string) map[string]any {
	t, _ := m[key].(map[string]any)
	return t
}
