package nodeboot

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	corev1 "k8s.io/api/core/v1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	sigsjson "sigs.k8s.io/json"
)

// Host is what a node's bootstrap learns of its instance (from IMDS and the
// host itself).
type Host struct {
	InstanceID, InstanceType, Zone string
	// CPUs is the host's CPU count: nodeadm reserves CPU for the cores it
	// sees (nodeadm's end-to-end cases ran on a 2-CPU host).
	CPUs int64
	// ENIs is what EC2 says of a type missing from nodeadm's table; nil
	// when EC2 cannot be asked.
	ENIs *ENIInfo
}

// Kubelet is the kubelet's configuration on a node, and the labels and
// taints it registers the Node with.
type Kubelet struct {
	// Base and DropIn are, on AL2023, the config.json nodeadm writes and its
	// drop-in (the user data's kubelet config); Config is what the kubelet
	// runs with: on AL2023 the drop-in merged into the base as the kubelet
	// merges drop-ins (a JSON merge patch), on Bottlerocket its settings.
	Base, DropIn map[string]any
	Config       kubeletv1beta1.KubeletConfiguration
	Labels       map[string]string
	Taints       []corev1.Taint
}

// The kubelet configuration's type.
const (
	kubeletKind       = "KubeletConfiguration"
	kubeletAPIVersion = "kubelet.config.k8s.io/v1beta1"
)

// Kubelet works out the kubelet's configuration from what the node read.
func (ud *UserData) Kubelet(h Host) (*Kubelet, error) {
	if ud.Family == Bottlerocket {
		return ud.bottlerocketKubelet(h)
	}
	return ud.nodeadmKubelet(h)
}

// nodeadmKubelet is nodeadm's kubelet configuration (its GenerateKubeletConfig
// and writeKubeletConfigToDir): the base with the cluster DNS from the
// service CIDR, the max pods of the type, kube-reserved from the host's
// CPUs and that max pods, and the EKS eviction thresholds; the user data's
// kubelet config as its drop-in.
func (ud *UserData) nodeadmKubelet(h Host) (*Kubelet, error) {
	spec := ud.NodeConfig.Spec
	dns, err := clusterDNS(spec.Cluster.CIDR)
	if err != nil {
		return nil, err
	}
	maxPods := BaseMaxPods(h.InstanceType, h.ENIs, spec.Kubelet.MaxPodsExpression)
	k := &Kubelet{Base: map[string]any{
		"kind": kubeletKind, "apiVersion": kubeletAPIVersion, "clusterDNS": []any{dns}, "maxPods": maxPods,
		"evictionHard": map[string]any{"memory.available": "100Mi", "nodefs.available": "10%", "nodefs.inodesFree": "5%"},
		"kubeReserved": map[string]any{"cpu": fmt.Sprintf("%dm", reservedMilliCPU(h.CPUs)), "ephemeral-storage": "1Gi",
			"memory": fmt.Sprintf("%dMi", 11*maxPods+255)},
		"systemReservedCgroup": "/system", "kubeReservedCgroup": "/runtime",
		"providerID": "aws:///" + h.Zone + "/" + h.InstanceID,
	}}
	merged, _ := json.Marshal(k.Base) //nolint:errchkjson // plain data
	if len(spec.Kubelet.Config) > 0 {
		k.DropIn = map[string]any{"kind": kubeletKind, "apiVersion": kubeletAPIVersion}
		for key, raw := range spec.Kubelet.Config {
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				return nil, fmt.Errorf("kubelet config %s: %w", key, err)
			}
			k.DropIn[key] = v
		}
		dropIn, _ := json.Marshal(k.DropIn) //nolint:errchkjson // decoded JSON
		if merged, err = jsonpatch.MergePatch(merged, dropIn); err != nil {
			return nil, fmt.Errorf("merging the kubelet's drop-in: %w", err)
		}
	}
	if err := decodeStrict(merged, &k.Config); err != nil {
		return nil, err
	}
	k.Labels, k.Taints, err = flagsOf(spec.Kubelet.Flags, k.Config.RegisterWithTaints)
	return k, err
}

// decodeStrict decodes the kubelet's configuration as the kubelet does:
// an unknown field, or one in the wrong case, and it does not start.
func decodeStrict(raw []byte, into *kubeletv1beta1.KubeletConfiguration) error {
	strict, err := sigsjson.UnmarshalStrict(raw, into)
	if err = errors.Join(append(strict, err)...); err != nil {
		return fmt.Errorf("the kubelet refuses its configuration: %w", err)
	}
	return nil
}

// flagsOf reads the labels (--node-labels, each occurrence adding keys, a
// later value winning) and taints (--register-with-taints, over the config's
// registerWithTaints) of the kubelet's flags.
func flagsOf(flags []string, configured []corev1.Taint) (map[string]string, []corev1.Taint, error) {
	labels := map[string]string{}
	taints := configured
	for _, f := range flags {
		name, value, _ := strings.Cut(strings.TrimPrefix(f, "--"), "=")
		switch name {
		case "node-labels":
			for _, kv := range strings.Split(value, ",") {
				if kv = strings.TrimSpace(kv); kv == "" {
					continue // as the kubelet's MapStringString skips it
				}
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					return nil, nil, fmt.Errorf("--node-labels: %q is not key=value", kv)
				}
				labels[k] = v
			}
		case "register-with-taints":
			taints = nil
			for _, spec := range strings.Split(value, ",") {
				t, err := parseTaint(spec)
				if err != nil {
					return nil, nil, fmt.Errorf("--register-with-taints: %w", err)
				}
				taints = append(taints, t)
			}
		}
	}
	return labels, taints, nil
}

// parseTaint reads the kubelet's key[=value]:effect.
func parseTaint(s string) (corev1.Taint, error) {
	kv, effect, ok := strings.Cut(s, ":")
	if !ok || effect == "" {
		return corev1.Taint{}, fmt.Errorf("taint %q has no effect: want key[=value]:effect", s)
	}
	k, v, _ := strings.Cut(kv, "=")
	return corev1.Taint{Key: k, Value: v, Effect: corev1.TaintEffect(effect)}, nil
}

// clusterDNS is nodeadm's GetClusterDns: an IPv4 CIDR's text up to its last
// dot, then ".10"; an IPv6 CIDR's address followed by "a".
func clusterDNS(cidr string) (string, error) {
	ip, _, err := net.ParseCIDR(cidr)
	if err != nil {
		return "", fmt.Errorf("spec.cluster.cidr %q is not a CIDR: %w", cidr, err)
	}
	if ip.To4() != nil {
		return cidr[:strings.LastIndex(cidr, ".")] + ".10", nil
	}
	addr, _, _ := strings.Cut(cidr, "/")
	return addr + "a", nil
}

// reservedMilliCPU is nodeadm's kube-reserved CPU: 6 % of the first core,
// 1 % of the second, 0.5 % of the third and fourth and 0.25 % of the rest,
// each range rounded down to a millicore.
func reservedMilliCPU(cpus int64) int64 {
	total := cpus * 1000
	bounds := []int64{0, 1000, 2000, 4000, total}
	basisPoints := []int64{600, 100, 50, 25}
	var reserved int64
	for i, bp := range basisPoints {
		if total <= bounds[i] {
			break
		}
		reserved += (min(total, bounds[i+1]) - bounds[i]) * bp / 10000
	}
	return reserved
}
