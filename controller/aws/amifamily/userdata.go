package amifamily

import (
	"encoding/base64"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// Cluster is what a node needs to join the cluster.
type Cluster struct {
	Name     string
	Endpoint string
	CABundle string // base64 PEM
	CIDR     string // service CIDR
}

// Bootstrap is one node configuration: the cluster plus the pool's labels and
// taints and the NodeClass's kubelet settings and extra user data.
type Bootstrap struct {
	Cluster    Cluster
	Kubelet    *v1alpha1.KubeletConfiguration
	Labels     map[string]string
	Taints     []corev1.Taint
	CustomData *string
	// InstanceStoreRAID0 puts the kubelet's and containerd's state on the
	// instance store's disks in RAID 0.
	InstanceStoreRAID0 bool
}

// UserData renders the base64 user data of a family.
func UserData(family string, b Bootstrap) string {
	var raw string
	switch family {
	case FamilyAL2023:
		raw = AL2023(b)
	case FamilyBottlerocket:
		raw = Bottlerocket(b)
	default:
		if b.CustomData != nil {
			raw = *b.CustomData
		}
	}
	return base64.StdEncoding.EncodeToString([]byte(raw))
}

const mimeBoundary = "//"

// AL2023 renders a MIME multi-part document with a nodeadm NodeConfig, after the
// NodeClass's own parts: each part of its user data when that is a MIME
// multi-part document (a NodeConfig of its own, which nodeadm merges, and
// scripts), else the whole as one shell script.
func AL2023(b Bootstrap) string {
	var sb strings.Builder
	sb.WriteString("MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"" + mimeBoundary + "\"\n\n")
	if b.CustomData != nil && *b.CustomData != "" {
		for _, p := range customParts(*b.CustomData) {
			sb.WriteString("--" + mimeBoundary + "\nContent-Type: " + p.contentType + "\n\n")
			sb.WriteString(strings.TrimSpace(p.body) + "\n\n")
		}
	}
	sb.WriteString("--" + mimeBoundary + "\nContent-Type: application/node.eks.aws\n\n")
	sb.WriteString("apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  cluster:\n")
	fmt.Fprintf(&sb, "    name: %s\n    apiServerEndpoint: %s\n    certificateAuthority: %s\n    cidr: %s\n",
		b.Cluster.Name, b.Cluster.Endpoint, b.Cluster.CABundle, b.Cluster.CIDR)
	if b.InstanceStoreRAID0 {
		sb.WriteString("  instance:\n    localStorage:\n      strategy: RAID0\n")
	}
	sb.WriteString("  kubelet:\n    config:\n")
	writeKubeletYAML(&sb, b.Kubelet)
	sb.WriteString("    flags:\n")
	fmt.Fprintf(&sb, "    - --node-labels=%s\n", joinLabels(b.Labels))
	if len(b.Taints) > 0 {
		fmt.Fprintf(&sb, "    - --register-with-taints=%s\n", joinTaints(b.Taints))
	}
	sb.WriteString("--" + mimeBoundary + "--\n")
	return sb.String()
}

func writeKubeletYAML(sb *strings.Builder, k *v1alpha1.KubeletConfiguration) {
	sb.WriteString("      registerWithTaints: []\n")
	if k == nil {
		return
	}
	if k.MaxPods != nil {
		fmt.Fprintf(sb, "      maxPods: %d\n", *k.MaxPods)
	}
	if k.PodsPerCore != nil {
		fmt.Fprintf(sb, "      podsPerCore: %d\n", *k.PodsPerCore)
	}
	if len(k.ClusterDNS) > 0 {
		fmt.Fprintf(sb, "      clusterDNS: [%s]\n", strings.Join(k.ClusterDNS, ", "))
	}
	writeInts(sb, "      %s: %d\n", []namedInt{{"evictionMaxPodGracePeriod", k.EvictionMaxPodGracePeriod},
		{"imageGCHighThresholdPercent", k.ImageGCHighThresholdPercent}, {"imageGCLowThresholdPercent", k.ImageGCLowThresholdPercent}})
	if k.CPUCFSQuota != nil {
		fmt.Fprintf(sb, "      cpuCFSQuota: %t\n", *k.CPUCFSQuota)
	}
	for _, m := range []struct {
		name   string
		values map[string]string
	}{{"kubeReserved", k.KubeReserved}, {"systemReserved", k.SystemReserved}, {"evictionHard", k.EvictionHard},
		{"evictionSoft", k.EvictionSoft}, {"evictionSoftGracePeriod", durations(k.EvictionSoftGracePeriod)}} {
		if len(m.values) == 0 {
			continue
		}
		fmt.Fprintf(sb, "      %s:\n", m.name)
		for _, key := range sortedKeys(m.values) {
			fmt.Fprintf(sb, "        %s: %q\n", key, m.values[key])
		}
	}
}

// Bottlerocket renders Bottlerocket's TOML settings; the NodeClass's own TOML
// comes first so Stowage's cluster settings win.
func Bottlerocket(b Bootstrap) string {
	var sb strings.Builder
	if b.CustomData != nil && *b.CustomData != "" {
		sb.WriteString(strings.TrimSpace(*b.CustomData) + "\n\n")
	}
	sb.WriteString("[settings.kubernetes]\n")
	fmt.Fprintf(&sb, "cluster-name = %q\napi-server = %q\ncluster-certificate = %q\n",
		b.Cluster.Name, b.Cluster.Endpoint, b.Cluster.CABundle)
	if k := b.Kubelet; k != nil {
		if k.MaxPods != nil {
			fmt.Fprintf(&sb, "max-pods = %d\n", *k.MaxPods)
		}
		if len(k.ClusterDNS) > 0 {
			fmt.Fprintf(&sb, "cluster-dns-ip = %q\n", k.ClusterDNS[0])
		}
		writeBottlerocketKubelet(&sb, k)
	}
	writeTOMLTable(&sb, "settings.kubernetes.node-labels", b.Labels)
	if b.InstanceStoreRAID0 {
		sb.WriteString("\n[settings.bootstrap-commands.k8s-ephemeral-storage]\n")
		sb.WriteString("commands = [[\"apiclient\", \"ephemeral-storage\", \"init\"], " +
			"[\"apiclient\", \"ephemeral-storage\", \"bind\", \"--dirs\", \"/var/lib/containerd\", \"/var/lib/kubelet\", \"/var/log/pods\"]]\n")
		sb.WriteString("mode = \"always\"\nessential = true\n")
	}
	if len(b.Taints) > 0 {
		sb.WriteString("\n[settings.kubernetes.node-taints]\n")
		for _, t := range b.Taints {
			fmt.Fprintf(&sb, "%q = [%q]\n", t.Key, t.Value+":"+string(t.Effect))
		}
	}
	return sb.String()
}

func writeTOMLTable(sb *strings.Builder, name string, values map[string]string) {
	if len(values) == 0 {
		return
	}
	fmt.Fprintf(sb, "\n[%s]\n", name)
	for _, k := range sortedKeys(values) {
		fmt.Fprintf(sb, "%q = %q\n", k, values[k])
	}
}

func joinLabels(labels map[string]string) string {
	parts := make([]string, 0, len(labels))
	for _, k := range sortedKeys(labels) {
		parts = append(parts, k+"="+labels[k])
	}
	return strings.Join(parts, ",")
}

func joinTaints(taints []corev1.Taint) string {
	parts := make([]string, 0, len(taints))
	for _, t := range taints {
		parts = append(parts, fmt.Sprintf("%s=%s:%s", t.Key, t.Value, t.Effect))
	}
	return strings.Join(parts, ",")
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
