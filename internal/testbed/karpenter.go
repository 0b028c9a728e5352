package testbed

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/stowage-dev/stowage/controller/catalogue"
	"github.com/stowage-dev/stowage/controller/deploy"
	"github.com/stowage-dev/stowage/internal/testenv"
)

// Karpenter's kwok cloud provider gives every instance type a fixed
// kube-reserved of 100m CPU and 10Mi memory, whatever its size: its
// allocatable is the instance types file's resources less these.
var (
	KarpenterKwokReservedCPU    = resource.MustParse("100m")
	KarpenterKwokReservedMemory = resource.MustParse("10Mi")
)

// KarpenterOptions say how StartKarpenter runs Karpenter.
type KarpenterOptions struct {
	// Assets are the binary and CRDs make tools built (testenv.KarpenterAssets).
	Assets testenv.Karpenter
	// Dir holds its instance types file and log.
	Dir string
	// InstanceTypes are its offerings: on-demand in every zone, at the
	// catalogue's price, with the allocatable Stowage predicts (see
	// KarpenterInstanceTypes).
	InstanceTypes []catalogue.Info
	// Zones are the zones it offers them in.
	Zones []string
	// Flags come after the bed's.
	Flags []string
}

// InstallKarpenter applies Karpenter's CRDs (NodePool, NodeClaim,
// NodeOverlay, CapacityBuffer, KWOKNodeClass) from crdDir.
func (b *Bed) InstallKarpenter(crdDir string) error {
	if _, err := envtest.InstallCRDs(b.ControlPlane.Config, envtest.CRDInstallOptions{Paths: []string{crdDir}, ErrorIfPathMissing: true}); err != nil {
		return fmt.Errorf("installing Karpenter's CRDs from %s: %w", crdDir, err)
	}
	return nil
}

// StartKarpenter runs Karpenter's core with its kwok cloud provider as a
// process of the bed, in place of Stowage: it creates the Nodes of the
// NodeClaims it launches itself, after its KWOKNodeClass's
// nodeRegistrationDelay, with the annotation the bed's kwok manages. It acts
// as an administrator (its chart's RBAC is a Helm template), leader-elects in
// the manifests' namespace, and binds its metrics and health ports on every
// interface (it takes ports, not addresses), on ports free at the call.
func (b *Bed) StartKarpenter(o KarpenterOptions) (*ControllerProcess, error) {
	types, err := KarpenterInstanceTypes(o.InstanceTypes, o.Zones)
	if err != nil {
		return nil, err
	}
	typesFile := filepath.Join(o.Dir, "instance-types.json")
	if err := os.WriteFile(typesFile, types, 0o600); err != nil {
		return nil, err
	}
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	args := append([]string{
		"--instance-types-file-path=" + typesFile,
		fmt.Sprintf("--metrics-port=%d", ports[0]), fmt.Sprintf("--health-probe-port=%d", ports[1]),
		"--leader-election-namespace=" + deploy.Namespace, "--log-level=info",
	}, o.Flags...)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + o.Dir, "KUBECONFIG=" + b.ControlPlane.KubeconfigPath}
	return startProcess(o.Assets.Binary, args, env, filepath.Join(o.Dir, "karpenter.log"))
}

// freePorts returns n loopback ports free at the time of the call.
func freePorts(n int) ([]int, error) {
	out := make([]int, 0, n)
	for range n {
		addr, err := FreeAddr()
		if err != nil {
			return nil, err
		}
		var port int
		if _, err := fmt.Sscanf(addr, "127.0.0.1:%d", &port); err != nil {
			return nil, fmt.Errorf("reading the port of %s: %w", addr, err)
		}
		out = append(out, port)
	}
	return out, nil
}

// karpenterInstanceType is one entry of the kwok provider's
// --instance-types-file-path JSON (its InstanceTypeOptions).
type karpenterInstanceType struct {
	Name             string              `json:"name"`
	Offerings        []karpenterOffering `json:"offerings"`
	Architecture     string              `json:"architecture"`
	OperatingSystems []string            `json:"operatingSystems"`
	Resources        corev1.ResourceList `json:"resources"`
}

type karpenterOffering struct {
	Price        float64                          `json:"Price"`
	Available    bool                             `json:"Available"`
	Requirements []corev1.NodeSelectorRequirement `json:"Requirements"`
}

// KarpenterInstanceTypes writes the catalogue's types as the kwok
// provider's instance types file: Linux, on-demand in every zone at the
// catalogue's price, and resources that are the allocatable Stowage predicts
// for the type (PredictedAllocatable) plus the provider's fixed reserve, so
// that both systems plan with, and get Nodes of, the same allocatable.
func KarpenterInstanceTypes(infos []catalogue.Info, zones []string) ([]byte, error) {
	out := make([]karpenterInstanceType, 0, len(infos))
	for _, info := range infos {
		res := PredictedAllocatable(info)
		cpu, mem := res[corev1.ResourceCPU], res[corev1.ResourceMemory]
		cpu.Add(KarpenterKwokReservedCPU)
		mem.Add(KarpenterKwokReservedMemory)
		res[corev1.ResourceCPU], res[corev1.ResourceMemory] = cpu, mem
		it := karpenterInstanceType{Name: info.Name, Architecture: info.Arch, OperatingSystems: []string{"linux"}, Resources: res}
		for _, zone := range zones {
			it.Offerings = append(it.Offerings, karpenterOffering{Price: info.OnDemandPrice, Available: true,
				Requirements: []corev1.NodeSelectorRequirement{
					{Key: "karpenter.sh/capacity-type", Operator: corev1.NodeSelectorOpIn, Values: []string{"on-demand"}},
					{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{zone}},
				}})
		}
		out = append(out, it)
	}
	b, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		return nil, fmt.Errorf("writing Karpenter's instance types: %w", err)
	}
	return b, nil
}

// PredictedAllocatable is the allocatable Stowage plans with for the type:
// the EKS formulas of controller/catalogue on the default root volume and
// kubelet settings.
func PredictedAllocatable(info catalogue.Info) corev1.ResourceList {
	capacity := catalogue.Capacity(info, catalogue.Options{})
	return capacity.Sub(catalogue.ComputeOverhead(info, capacity, catalogue.Options{}).Total()).List()
}
