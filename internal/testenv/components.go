package testenv

import "path/filepath"

// The annotation kwok's selector matches: a Node carrying it is run by kwok
// (marked Ready, lease renewed, its pods run).
const (
	KwokNodeAnnotation      = "kwok.x-k8s.io/node"
	KwokNodeAnnotationValue = "fake"
)

// ControllerManagerControllers are the kube-controller-manager controllers the
// bed runs: node-lifecycle lifts the not-ready taint of new Nodes, the others
// keep namespaces, service accounts and garbage collection working.
var ControllerManagerControllers = []string{
	"node-lifecycle-controller",
	"garbage-collector-controller",
	"namespace-controller",
	"serviceaccount-controller",
	"serviceaccount-token-controller",
	"pod-garbage-collector-controller",
}

// StartScheduler starts the real kube-scheduler on the control plane, serving
// nothing itself; extra flags are appended.
func (cp *ControlPlane) StartScheduler(extra ...string) error {
	return cp.run(KubeScheduler, append(flags(
		"kubeconfig", cp.KubeconfigPath,
		"secure-port", "0",
		"leader-elect", "false",
	), extra...), nil)
}

// StartControllerManager starts kube-controller-manager with
// ControllerManagerControllers, serving nothing itself; extra flags are appended.
func (cp *ControlPlane) StartControllerManager(extra ...string) error {
	return cp.run(KubeControllerManager, append(flags(
		"kubeconfig", cp.KubeconfigPath,
		"secure-port", "0",
		"leader-elect", "false",
		"controllers", joinComma(ControllerManagerControllers),
		"service-account-private-key-file", cp.pki.SAPrivateKeyFile,
		"root-ca-file", cp.pki.CAFile,
		"service-cluster-ip-range", ServiceClusterIPRange,
	), extra...), nil)
}

// StartKwok starts kwok as the kubelet stand-in for Nodes annotated
// KwokNodeAnnotation=KwokNodeAnnotationValue, with the stages from KwokStages.
// It runs with HOME in Dir so that no ~/.kwok/kwok.yaml is picked up; extra
// flags are appended.
func (cp *ControlPlane) StartKwok(extra ...string) error {
	stages, err := KwokStages()
	if err != nil {
		return err
	}
	args := append(flags(
		"kubeconfig", cp.KubeconfigPath,
		"manage-all-nodes", "false",
		"manage-nodes-with-annotation-selector", KwokNodeAnnotation+"="+KwokNodeAnnotationValue,
		"cidr", "10.244.0.0/16",
		"node-port", "0",
		// Renew each Node's lease as a kubelet does: without it kwok's
		// heartbeat stage writes every ten minutes, the node lifecycle
		// controller takes the nodes for gone after its grace period and
		// marks their pods not Ready, and every PDB then allows nothing.
		"node-lease-duration-seconds", "40",
	), "-c", stages)
	home := filepath.Join(cp.Dir, "kwok-home")
	return cp.run(Kwok, append(args, extra...), []string{"HOME=" + home})
}
