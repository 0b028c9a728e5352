package simulate

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// guarded is calm with a PDB over its pods and a PriorityClass they name.
const guarded = calm + `---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: default}
spec:
  maxUnavailable: 1
  selector: {matchLabels: {app: web}}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: serving}
value: 1000
preemptionPolicy: Never
`

func TestScenariosCarryPDBsAndPriorityClasses(t *testing.T) {
	doc := strings.Replace(guarded, "      containers:", "      priorityClassName: serving\n      containers:", 1)
	s, err := ReadScenario(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.PodDisruptionBudgets) != 1 || len(s.PriorityClasses) != 1 {
		t.Fatalf("read %d PDBs and %d PriorityClasses, want 1 and 1", len(s.PodDisruptionBudgets), len(s.PriorityClasses))
	}
	w := startedWorld(t, s)
	sp := w.workloads[0]
	if err := w.createPod(t.Context(), sp); err != nil {
		t.Fatal(err)
	}
	pod := w.workloads[0].live[0].pod
	if pod.Spec.Priority == nil || *pod.Spec.Priority != 1000 || pod.Spec.PreemptionPolicy == nil || *pod.Spec.PreemptionPolicy != corev1.PreemptNever {
		t.Errorf("pod priority %v and preemption policy %v, want the class's 1000 and Never", pod.Spec.Priority, pod.Spec.PreemptionPolicy)
	}
}

func TestBadPDBsAndPriorityClassesNameTheField(t *testing.T) {
	for _, tc := range []struct{ name, from, to, want string }{
		{"both budgets", "maxUnavailable: 1", "maxUnavailable: 1\n  minAvailable: 2", "PodDisruptionBudget default/web: spec: Invalid value"},
		{"no budget", "maxUnavailable: 1", "", "spec.minAvailable: Required value: set minAvailable or maxUnavailable"},
		{"over 100%", "maxUnavailable: 1", "maxUnavailable: 150%", "spec.maxUnavailable: Invalid value: \"150%\""},
		{"bad policy", "maxUnavailable: 1", "maxUnavailable: 1\n  unhealthyPodEvictionPolicy: Sometimes", "spec.unhealthyPodEvictionPolicy: Unsupported value"},
		{"reserved name", "name: serving}", "name: system-serving}", "metadata.name: Invalid value: \"system-serving\""},
		{"too high", "value: 1000", "value: 2000000000", "value: Invalid value: 2000000000: must be at most 1000000000"},
		{"unknown class", "      containers:", "      priorityClassName: batch\n      containers:", "spec.template.spec.priorityClassName: Not found: \"batch\""},
		{"wrong apiVersion", "apiVersion: policy/v1", "apiVersion: policy/v1beta1", "use policy/v1"},
	} {
		doc := strings.Replace(guarded, tc.from, tc.to, 1)
		if _, err := ReadScenario(strings.NewReader(doc)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
}

// TestTheAPIServerRefusesWhatAPDBForbids: three Ready pods under
// maxUnavailable 1 allow one eviction; a second is refused with 429 until
// the disruption controller has seen the first pod go and a replacement come
// Ready; a pending pod is evicted whatever the budget says.
func TestTheAPIServerRefusesWhatAPDBForbids(t *testing.T) {
	s, err := ReadScenario(strings.NewReader(guarded))
	if err != nil {
		t.Fatal(err)
	}
	w := startedWorld(t, s)
	ctx := t.Context()
	var pods []*simPod
	for range 3 {
		pods = append(pods, readyPod(t, w))
	}
	w.clk.Step(2 * time.Minute) // the Deployment wants 6: 6 expected, 5 desired healthy
	syncNow(t, w)
	if pdb := storedPDB(t, w); pdb.Status.ExpectedPods != 6 || pdb.Status.DesiredHealthy != 5 || pdb.Status.DisruptionsAllowed != 0 {
		t.Fatalf("status %+v, want 6 expected, 5 desired, none allowed with 3 healthy", pdb.Status)
	}
	if err := evict(ctx, w, pods[0]); !apierrors.IsTooManyRequests(err) || !strings.Contains(err.Error(), "disruption budget") {
		t.Errorf("evicting under a budget that allows none: %v, want 429", err)
	}
	for range 3 {
		readyPod(t, w)
	}
	syncNow(t, w)
	if err := evict(ctx, w, pods[0]); err != nil {
		t.Fatalf("evicting with one disruption allowed: %v", err)
	}
	if err := evict(ctx, w, pods[1]); !apierrors.IsTooManyRequests(err) {
		t.Errorf("a second eviction before the controller syncs: %v, want 429", err)
	}
	pending := w.workloads[0]
	if err := w.createPod(ctx, pending); err != nil {
		t.Fatal(err)
	}
	if err := evict(ctx, w, pending.live[len(pending.live)-1]); err != nil {
		t.Errorf("evicting a pending pod: %v, want it deleted whatever the budget says", err)
	}
}

func startedWorld(t *testing.T, s *Scenario) *world {
	t.Helper()
	w, err := newWorld(s, 1, SystemStowage)
	if err != nil {
		t.Fatal(err)
	}
	w.kube.onWrite = w.observe
	if err := w.seed(t.Context()); err != nil {
		t.Fatal(err)
	}
	return w
}

// readyPod creates a pod of the first workload, bound and reported Ready.
func readyPod(t *testing.T, w *world) *simPod {
	t.Helper()
	ws := w.workloads[0]
	if err := w.createPod(t.Context(), ws); err != nil {
		t.Fatal(err)
	}
	sp := ws.live[len(ws.live)-1]
	sp.runningAt = w.clk.Now()
	if err := w.reportRunning(sp); err != nil {
		t.Fatal(err)
	}
	return sp
}

func syncNow(t *testing.T, w *world) {
	t.Helper()
	w.podsChanged = true
	if err := w.syncPDBs(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func storedPDB(t *testing.T, w *world) *policyv1.PodDisruptionBudget {
	t.Helper()
	pdb := &policyv1.PodDisruptionBudget{}
	if err := w.kube.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "web"}, pdb); err != nil {
		t.Fatal(err)
	}
	return pdb
}

func evict(ctx context.Context, w *world, sp *simPod) error {
	return w.kube.SubResource("eviction").Create(ctx, sp.pod, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: sp.pod.Name, Namespace: sp.pod.Namespace}})
}
