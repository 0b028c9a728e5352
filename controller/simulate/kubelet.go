package simulate

import (
	"context"
	"encoding/base64"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/scheduling"
	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/internal/nodeboot"
)

// registerNodes is the kubelets' part: every instance whose boot time has
// passed registers a Ready Node with its provider id, the well-known labels
// and the labels and taints its user data gives it.
func (w *world) registerNodes(ctx context.Context) error {
	now := w.clk.Now()
	for _, in := range byLaunch(w.booting) {
		if now.Before(in.readyAt) || w.outages.holds(in.id) {
			continue
		}
		if cur, ok := w.emu.Instance(in.id); !ok || cur.State != awsemu.StateRunning {
			continue
		}
		node, err := w.nodeFor(in)
		if err != nil {
			return err
		}
		if err := w.kube.Create(ctx, node); err != nil {
			return fmt.Errorf("registering node %s: %w", node.Name, err)
		}
		in.node = node.Name
		delete(w.booting, in.id)
		if i, found := slices.BinarySearch(w.nodeNames, in.node); !found {
			w.nodeNames = slices.Insert(w.nodeNames, i, in.node)
		}
		w.nodeEvent(node, false)
		if err := w.startDaemonSets(ctx, node); err != nil {
			return err
		}
	}
	return nil
}

// startDaemonSets is the DaemonSet controller's part: every DaemonSet whose
// pod tolerates the new node's taints and matches its node affinity runs one
// pod there, bound at once. The taint a Stowage node registers with until
// its NodeClaim's registration lifts it does not count: the DaemonSet
// controller acts once it is gone.
func (w *world) startDaemonSets(ctx context.Context, node *corev1.Node) error {
	taints := slices.DeleteFunc(slices.Clone(node.Spec.Taints), func(t corev1.Taint) bool {
		return t.MatchTaint(&v1alpha1.UnregisteredNoExecuteTaint)
	})
	for _, ds := range w.s.DaemonSets {
		pod := &corev1.Pod{ObjectMeta: *ds.Spec.Template.ObjectMeta.DeepCopy(), Spec: *ds.Spec.Template.Spec.DeepCopy()}
		if scheduling.Tolerates(taints, pod.Spec.Tolerations) != nil {
			continue
		}
		if ok, _ := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node); !ok {
			continue
		}
		pod.Namespace, pod.Name = ds.Namespace, ds.Name+"-"+node.Name
		if pod.Namespace == "" {
			pod.Namespace = "default"
		}
		pod.Spec.NodeName = node.Name
		priority, preemption := w.s.priorityOf(&pod.Spec)
		pod.Spec.Priority, pod.Spec.PreemptionPolicy = &priority, preemption
		pod.Status.Phase = corev1.PodRunning
		pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: ds.Name,
			UID: types.UID("ds-" + ds.Name), Controller: ptr.To(true)}}
		if err := w.kube.Create(ctx, pod); err != nil {
			return fmt.Errorf("starting DaemonSet %s on %s: %w", ds.Name, node.Name, err)
		}
		w.requested[node.Name] = w.requested[node.Name].Add(scheduling.PodRequests(pod))
		w.daemonPods[node.Name] = append(w.daemonPods[node.Name], pod)
	}
	return nil
}

// stopDaemonSets deletes the DaemonSet pods of a node that is gone, as the
// pod garbage collector does.
func (w *world) stopDaemonSets(ctx context.Context, node string) error {
	for _, pod := range w.daemonPods[node] {
		if err := w.kube.Delete(ctx, pod); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting %s/%s: %w", pod.Namespace, pod.Name, err)
		}
	}
	delete(w.daemonPods, node)
	delete(w.requested, node)
	return nil
}

// nodeFor is the Node an instance's kubelet registers: its user data (what
// its launch template carried, whoever launched it) read as a node of its
// image reads it, and the kubelet's configuration, capacity and allocatable
// that gives by nodeadm's or Bottlerocket's rules (internal/nodeboot, as the
// whole-system bed's kubelet), never Stowage's own formulas.
func (w *world) nodeFor(in *simInstance) (*corev1.Node, error) {
	cur, _ := w.emu.Instance(in.id)
	specs := w.emu.InstanceTypes()
	i := slices.IndexFunc(specs, func(s awsemu.InstanceTypeSpec) bool { return s.Name == in.instanceType })
	if i < 0 {
		return nil, fmt.Errorf("instance %s: type %s is not in the emulator's catalogue", in.id, in.instanceType)
	}
	family := nodeboot.AL2023
	if img, ok := w.emu.ImageByID(cur.ImageID); ok {
		family = nodeboot.FamilyOfImage(img.Name)
	}
	raw, err := base64.StdEncoding.DecodeString(cur.UserData)
	if err != nil {
		return nil, fmt.Errorf("instance %s: its user data is not base64: %w", in.id, err)
	}
	ud, err := nodeboot.Read(family, raw)
	if err != nil {
		return nil, fmt.Errorf("instance %s: %w", in.id, err)
	}
	// Resource-based hostnames (EC2's "resource name" hostname type): unique
	// where an IP address may be reused while an old Node still drains.
	name := in.id + "." + w.s.region() + ".compute.internal"
	node, _, err := ud.Boot(name, nodeboot.InstanceOf(cur, specs[i], w.s.region(), nodeboot.Volumes(w.emu, cur)))
	if err != nil {
		return nil, fmt.Errorf("instance %s: %w", in.id, err)
	}
	// The capacity type, as the NodeClaim's labels or the Auto Scaling group's put it on the Node.
	node.Labels[v1alpha1.LabelCapacityType] = in.capacityType
	node.CreationTimestamp = metav1.NewTime(w.clk.Now())
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		LastTransitionTime: metav1.NewTime(w.clk.Now())}}
	return node, nil
}

// startPods is the kubelets' other part: a bound pod runs after its start-up
// time, reported Running and Ready; a Job's pod then finishes after its run
// time.
func (w *world) startPods() error {
	now := w.clk.Now()
	var still []*simPod
	for _, sp := range w.starting {
		switch {
		case w.pods[sp.key] != sp:
		case now.Before(sp.runningAt) || w.outages.silent(sp.node):
			still = append(still, sp)
		default:
			if err := w.reportRunning(sp); err != nil {
				return err
			}
			sp.running = true
			w.out.podRunning(sp, sp.runningAt.Sub(sp.created))
			w.waited(sp, true, sp.runningAt)
			if sp.workload != nil && sp.workload.spec.Job != "" {
				sp.finishAt = sp.runningAt.Add(sp.workload.spec.RunFor.Duration)
				w.finishing = append(w.finishing, sp)
			}
		}
	}
	w.starting = still
	return nil
}

// reportRunning writes the pod's status as its kubelet does once its
// containers run: phase Running, started and Ready at its start-up time.
func (w *world) reportRunning(sp *simPod) error {
	at := metav1.NewTime(sp.runningAt)
	status := *sp.pod.Status.DeepCopy()
	status.Phase, status.StartTime = corev1.PodRunning, &at
	for _, t := range []corev1.PodConditionType{corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		status.Conditions = append(status.Conditions, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: at})
	}
	stored, err := w.kube.writePodStatus(client.ObjectKeyFromObject(sp.pod), "", status)
	if err != nil {
		return fmt.Errorf("reporting pod %s running: %w", sp.key, err)
	}
	sp.pod = stored
	return nil
}

// reapInstances is the cloud controller manager's part: the Node of an
// instance that has terminated is deleted, and the pods still running on it
// are lost with it.
func (w *world) reapInstances(ctx context.Context) error {
	for _, id := range slices.Sorted(maps.Keys(w.terminating)) {
		cur, ok := w.emu.Instance(id)
		if ok && cur.State != awsemu.StateTerminated && cur.State != awsemu.StateShuttingDown {
			continue
		}
		delete(w.terminating, id)
		in, tracked := w.instances[id]
		if !tracked {
			continue
		}
		delete(w.instances, in.id)
		delete(w.voluntary, in.node)
		if w.waits != nil {
			w.waits.released(in.node)
		}
		delete(w.booting, in.id)
		if i, found := slices.BinarySearch(w.nodeNames, in.node); in.node != "" && found {
			w.nodeNames = slices.Delete(w.nodeNames, i, i+1)
			delete(w.nodeFits, in.node)
		}
		w.out.terminated++
		w.out.instanceGone(in, w.clk.Now())
		if in.node == "" {
			continue
		}
		lost := w.podsOn(in.node)
		w.outages.lostWith(in, len(lost))
		for _, sp := range lost {
			w.out.podLost(in.id)
			w.observeLost(sp, in.id)
			if err := w.deletePod(ctx, sp); err != nil {
				return err
			}
		}
		delete(w.onNode, in.node)
		if err := w.stopDaemonSets(ctx, in.node); err != nil {
			return err
		}
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: in.node}}
		if err := w.kube.Delete(ctx, node); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting node %s: %w", in.node, err)
		}
	}
	return nil
}
