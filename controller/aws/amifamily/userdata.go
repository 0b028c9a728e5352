package amifamily

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// Cluster is what a node needs to join the cluster.
type Cluster struct {
	Name     string
	Endpoint string
	CABundle string // base64 PEM
	// CIDR is the cluster's service CIDR (IPv4, or IPv6 on an IPv6
	// cluster): nodeadm and Stowage derive the nodes' cluster DNS from it.
	CIDR string
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

// Rendered is a family's user data.
type Rendered struct {
	// Text is the user data as the node reads it (EC2 carries it base64).
	Text string
	// Replaced names the settings of the NodeClass's userData that Stowage's
	// own settings replace (e.g. settings.kubernetes.cluster-name), sorted.
	Replaced []string
}

// Render builds the user data of a family: for AL2023 a MIME multi-part
// message of nodeadm NodeConfig documents, for Bottlerocket one TOML
// document of the NodeClass's settings with Stowage's laid over them, and
// for a custom family the NodeClass's userData as it is. The error names
// spec.userData when the NodeClass's own user data cannot be read.
func Render(family string, b Bootstrap) (Rendered, error) {
	var (
		r   Rendered
		err error
	)
	switch family {
	case FamilyAL2023:
		r, err = al2023(b)
	case FamilyBottlerocket:
		r, err = bottlerocket(b)
	default:
		r.Text = b.custom()
	}
	if err != nil {
		return Rendered{}, fmt.Errorf("rendering %s user data: %w", family, err)
	}
	slices.Sort(r.Replaced)
	r.Replaced = slices.Compact(r.Replaced)
	return r, nil
}

// custom is the NodeClass's own user data, empty when it has none.
func (b Bootstrap) custom() string {
	if b.CustomData == nil {
		return ""
	}
	return *b.CustomData
}

// kubeletSettings are the NodeClass's kubelet settings under the kubelet's
// own field names (KubeletConfiguration, kubelet.config.k8s.io/v1beta1),
// which nodeadm's kubelet.config carries and Bottlerocket's settings rename.
type kubeletSettings struct {
	MaxPods                     *int32            `json:"maxPods,omitempty"`
	PodsPerCore                 *int32            `json:"podsPerCore,omitempty"`
	ClusterDNS                  []string          `json:"clusterDNS,omitempty"`
	KubeReserved                map[string]string `json:"kubeReserved,omitempty"`
	SystemReserved              map[string]string `json:"systemReserved,omitempty"`
	EvictionHard                map[string]string `json:"evictionHard,omitempty"`
	EvictionSoft                map[string]string `json:"evictionSoft,omitempty"`
	EvictionSoftGracePeriod     map[string]string `json:"evictionSoftGracePeriod,omitempty"`
	EvictionMaxPodGracePeriod   *int32            `json:"evictionMaxPodGracePeriod,omitempty"`
	ImageGCHighThresholdPercent *int32            `json:"imageGCHighThresholdPercent,omitempty"`
	ImageGCLowThresholdPercent  *int32            `json:"imageGCLowThresholdPercent,omitempty"`
	CPUCFSQuota                 *bool             `json:"cpuCFSQuota,omitempty"`
	RegisterWithTaints          []corev1.Taint    `json:"registerWithTaints,omitempty"`
}

func kubeletOf(k *v1alpha1.KubeletConfiguration) kubeletSettings {
	if k == nil {
		return kubeletSettings{}
	}
	s := kubeletSettings{MaxPods: k.MaxPods, PodsPerCore: k.PodsPerCore, ClusterDNS: k.ClusterDNS,
		KubeReserved: k.KubeReserved, SystemReserved: k.SystemReserved, EvictionHard: k.EvictionHard,
		EvictionSoft: k.EvictionSoft, EvictionMaxPodGracePeriod: k.EvictionMaxPodGracePeriod,
		ImageGCHighThresholdPercent: k.ImageGCHighThresholdPercent, ImageGCLowThresholdPercent: k.ImageGCLowThresholdPercent,
		CPUCFSQuota: k.CPUCFSQuota}
	if len(k.EvictionSoftGracePeriod) > 0 {
		s.EvictionSoftGracePeriod = map[string]string{}
		for signal, d := range k.EvictionSoftGracePeriod {
			s.EvictionSoftGracePeriod[signal] = d.Duration.String()
		}
	}
	return s
}
