package testenv_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/stowage-dev/stowage/internal/testenv"
)

// TestBedRunsPodOnKwokNode starts the whole bed and checks that a pending pod
// is bound by the real kube-scheduler to a kwok Node and run by kwok.
func TestBedRunsPodOnKwokNode(t *testing.T) {
	started := time.Now()
	cp := testenv.Start(t, testenv.BedOptions())
	t.Logf("bed started in %.1fs (kubeconfig %s)", time.Since(started).Seconds(), cp.KubeconfigPath)

	client, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		t.Fatalf("building the client: %v", err)
	}
	ctx := t.Context()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "smoke"}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the namespace: %v", err)
	}
	if _, err := client.CoreV1().Nodes().Create(ctx, kwokNode("ip-10-1-2-3.ec2.internal"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the node: %v", err)
	}
	created := time.Now()
	if _, err := client.CoreV1().Pods("smoke").Create(ctx, smallPod("web-0"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the pod: %v", err)
	}
	eventually(t, cp, 60*time.Second, func() error {
		pod, err := client.CoreV1().Pods("smoke").Get(ctx, "web-0", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if pod.Spec.NodeName != "ip-10-1-2-3.ec2.internal" || pod.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("pod on node %q in phase %q", pod.Spec.NodeName, pod.Status.Phase)
		}
		return nil
	})
	t.Logf("pod bound and running %.1fs after creation", time.Since(created).Seconds())
	eventually(t, cp, 30*time.Second, func() error {
		node, err := client.CoreV1().Nodes().Get(ctx, "ip-10-1-2-3.ec2.internal", metav1.GetOptions{})
		if err != nil {
			return err
		}
		return readyAndUntainted(node)
	})

	stopping := time.Now()
	if err := cp.Stop(); err != nil {
		t.Fatalf("stopping the bed: %v", err)
	}
	t.Logf("bed stopped in %.1fs", time.Since(stopping).Seconds())
}

func TestAssetsNamesMakeTarget(t *testing.T) {
	t.Setenv("STOWAGE_CACHE", t.TempDir())
	_, err := testenv.Assets(testenv.KubeAPIServer)
	if !errors.Is(err, testenv.ErrMissingAsset) {
		t.Fatalf("Assets() error = %v, want ErrMissingAsset", err)
	}
	if !strings.Contains(err.Error(), "kube-apiserver not found in") || !strings.Contains(err.Error(), "run `make tools`") {
		t.Errorf("Assets() error = %q, want it to name the binary and `make tools`", err)
	}
}

// readyAndUntainted checks kwok's work (Ready) and kube-controller-manager's
// (the not-ready taint lifted).
func readyAndUntainted(node *corev1.Node) error {
	for _, taint := range node.Spec.Taints {
		if taint.Key == corev1.TaintNodeNotReady {
			return fmt.Errorf("node still carries taint %s", taint.Key)
		}
	}
	for _, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
			return nil
		}
	}
	return fmt.Errorf("node not Ready: %v", node.Status.Conditions)
}

// eventually polls check every 100 ms until it returns nil, failing t with the
// last error at the deadline, or at once when a component has exited.
func eventually(t *testing.T, cp *testenv.ControlPlane, timeout time.Duration, check func() error) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		last := check()
		if last == nil {
			return
		}
		if err := cp.Err(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-deadline.C:
			t.Fatalf("still failing after %s: %v", timeout, last)
		case <-tick.C:
		}
	}
}

// kwokNode is a Node as the instance bridge registers it: kwok annotation,
// provider ID, capacity, allocatable and the well-known labels.
func kwokNode(name string) *corev1.Node {
	resources := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("4"),
		corev1.ResourceMemory: resource.MustParse("16Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{testenv.KwokNodeAnnotation: testenv.KwokNodeAnnotationValue},
			Labels: map[string]string{
				"kubernetes.io/hostname":           name,
				"kubernetes.io/os":                 "linux",
				"kubernetes.io/arch":               "amd64",
				"node.kubernetes.io/instance-type": "m5.xlarge",
				"topology.kubernetes.io/zone":      "us-west-2a",
				"type":                             "kwok",
			},
		},
		Spec:   corev1.NodeSpec{ProviderID: "aws:///us-west-2a/i-0123456789abcdef0"},
		Status: corev1.NodeStatus{Capacity: resources, Allocatable: resources},
	}
}

func smallPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:  "app",
				Image: "registry.invalid/app:1",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU:    resource.MustParse("500m"),
					corev1.ResourceMemory: resource.MustParse("256Mi"),
				}},
			}},
		},
	}
}

// TestStartReportsComponentExit checks that a component dying at start fails
// StartControlPlane at once, with the tail of its log.
func TestStartReportsComponentExit(t *testing.T) {
	bin := testenv.RequireAssets(t, testenv.Etcd, testenv.KubeAPIServer)
	o := testenv.Options{BinDir: bin, ExtraFlags: map[string][]string{testenv.KubeAPIServer: {"--no-such-flag"}}}
	cp, err := testenv.StartControlPlane(t.Context(), o)
	if err == nil {
		_ = cp.Stop()
		t.Fatal("StartControlPlane() succeeded with a bad kube-apiserver flag")
	}
	if !strings.Contains(err.Error(), "kube-apiserver exited early") || !strings.Contains(err.Error(), "no-such-flag") {
		t.Errorf("StartControlPlane() error = %v, want the exit and the log line naming the flag", err)
	}
}
