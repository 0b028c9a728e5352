package disruption_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/controller/disruption"
	"github.com/stowage-dev/stowage/controller/provisioning/scheduler"
	"github.com/stowage-dev/stowage/controller/state/statetest"
)

// bed is the disruption controller on a real API server: the cluster state
// is fed by informers, every change goes through the API, and the test plays
// the parts of the controllers that are not running (the NodeClaim lifecycle
// initializing a replacement, the termination controller).
type bed struct {
	env   *statetest.Env
	rec   *recorder
	types *typeList
	ctrl  *disruption.Controller
	ids   int
	exec  *executed
	// written is the resource version of each object node wrote since the
	// last seen, by kind and name: seen waits for the cluster state to hold
	// these.
	written map[string]string
}

// typeList is the controller's instance types, which a test may reprice.
type typeList struct {
	mu  sync.Mutex
	its []*cloudprovider.InstanceType
}

func (ts *typeList) InstanceTypes(context.Context, *v1alpha1.NodePool) ([]*cloudprovider.InstanceType, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.its, nil
}

func (ts *typeList) set(its []*cloudprovider.InstanceType) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.its = its
}

// executed records the commands the controller executed.
type executed struct {
	mu   sync.Mutex
	cmds []string
}

func (e *executed) Executed(cmd disruption.Command, replacements []*v1alpha1.NodeClaim) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := cmd.Method + ":" + cmd.Action() + "[" + strings.Join(cmd.Names(), " ") + "]"
	for _, r := range replacements {
		s += "+" + r.Name
	}
	e.cmds = append(e.cmds, s)
}

func (e *executed) Blocked(disruption.Method, disruption.Blocked) {}

func (e *executed) take() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := e.cmds
	e.cmds = nil
	return out
}

func newBed(t *testing.T, opts disruption.Options) *bed {
	t.Helper()
	b := &bed{env: statetest.Start(t), rec: &recorder{}, types: &typeList{its: catalogue()}, exec: &executed{}}
	b.env.Clock.SetTime(epoch)
	opts.Recorder, opts.Observer = b.rec, b.exec
	opts.NewID = func() string { b.ids++; return fmt.Sprintf("c%d", b.ids) }
	b.ctrl = disruption.New(b.env.Clock, b.env.Cluster, b.types, disruption.ClientWriter{Client: b.env.Client}, opts)
	return b
}

// pool creates a NodePool (its NodeClass need not exist) and waits until
// the cluster state has it: a round before that sees no pool.
func (b *bed) pool(t *testing.T, np *v1alpha1.NodePool) {
	t.Helper()
	np = np.DeepCopy()
	np.Spec.Template.Spec.NodeClassRef = &v1alpha1.NodeClassReference{Group: v1alpha1.Group, Kind: "NodeClass", Name: "default"}
	b.env.Create(t, np)
	statetest.Eventually(t, 30*time.Second, func() error {
		if !slices.ContainsFunc(b.env.Cluster.NodePools(), func(p *v1alpha1.NodePool) bool { return p.Name == np.Name }) {
			return fmt.Errorf("the cluster state has no nodepool %s yet", np.Name)
		}
		return nil
	})
}

// node creates the state node's NodeClaim, Node and pods through the API,
// the pods in the test's namespace, bound and Running.
func (b *bed) node(t *testing.T, sn *scheduler.StateNode) {
	t.Helper()
	claim, node := sn.NodeClaim.DeepCopy(), sn.Node.DeepCopy()
	claim.UID, claim.CreationTimestamp = "", metav1.Time{}
	claim.Spec.NodeClassRef = &v1alpha1.NodeClassReference{Group: v1alpha1.Group, Kind: "NodeClass", Name: "default"}
	b.env.Create(t, claim, node)
	// The API server registers a node with the not-ready taint; the node
	// lifecycle controller, not running here, lifts it from a Ready node.
	node.Spec.Taints = sn.Node.Spec.Taints
	fatalIf(t, b.env.Client.Update(t.Context(), node))
	if b.written == nil {
		b.written = map[string]string{}
	}
	b.written["NodeClaim/"+claim.Name], b.written["Node/"+node.Name] = claim.ResourceVersion, node.ResourceVersion
	for _, p := range sn.Pods {
		p = p.DeepCopy()
		p.Namespace, p.UID = b.env.Namespace, ""
		p.Spec.NodeName = node.Name
		b.env.Create(t, p)
		b.written["Pod/"+p.Name] = p.ResourceVersion
	}
}

// seen waits until the cluster state shows want nodes (and their pods) as
// node last wrote them: a claim seen before its status is written is not
// Initialized yet, and a node before its status is not Ready.
func (b *bed) seen(t *testing.T, want map[string]int) {
	t.Helper()
	statetest.Eventually(t, 30*time.Second, func() error {
		got := map[string]int{}
		for _, sn := range b.env.Cluster.Snapshot(nil, nil).Nodes {
			if sn.Node == nil || sn.NodeClaim == nil {
				continue
			}
			if err := b.stale("NodeClaim/"+sn.NodeClaim.Name, sn.NodeClaim.ResourceVersion); err != nil {
				return err
			}
			if err := b.stale("Node/"+sn.Node.Name, sn.Node.ResourceVersion); err != nil {
				return err
			}
			n := 0
			for _, p := range sn.Pods {
				if p.Spec.NodeName == sn.Node.Name {
					if err := b.stale("Pod/"+p.Name, p.ResourceVersion); err != nil {
						return err
					}
					n++
				}
			}
			got[sn.Node.Name] = n
		}
		for name, pods := range want {
			if got[name] != pods {
				return fmt.Errorf("the cluster state has nodes and pods %v, want %v", got, want)
			}
		}
		return nil
	})
	b.written = nil // later writes are the test's, which waits for them itself
}

// stale is an error when the cluster state holds another version of an
// object node wrote than the one it wrote last.
func (b *bed) stale(key, resourceVersion string) error {
	if want, ok := b.written[key]; ok && want != resourceVersion {
		return fmt.Errorf("the cluster state has %s at version %s, want %s", key, resourceVersion, want)
	}
	return nil
}

// round runs one round after stepping the clock.
func (b *bed) round(t *testing.T, step time.Duration) {
	t.Helper()
	b.env.Clock.Step(step)
	fatalIf(t, b.ctrl.RunOnce(t.Context()))
}

// claims lists the NodeClaims: "name" or "name(deleted)".
func (b *bed) claims(t *testing.T) []string {
	t.Helper()
	list := &v1alpha1.NodeClaimList{}
	fatalIf(t, b.env.Client.List(t.Context(), list))
	var out []string
	for _, c := range list.Items {
		out = append(out, c.Name)
	}
	slices.Sort(out)
	return out
}

// replacements returns the claims a disruption command launched.
func (b *bed) replacements(t *testing.T) []*v1alpha1.NodeClaim {
	t.Helper()
	list := &v1alpha1.NodeClaimList{}
	fatalIf(t, b.env.Client.List(t.Context(), list))
	var out []*v1alpha1.NodeClaim
	for i := range list.Items {
		if list.Items[i].Annotations[v1alpha1.AnnotationDisruptionCommand] != "" {
			out = append(out, &list.Items[i])
		}
	}
	return out
}

// initialize plays the NodeClaim lifecycle for a replacement: its instance
// launched, its Node registered and became Ready, and it is Initialized.
func (b *bed) initialize(t *testing.T, claim *v1alpha1.NodeClaim, instanceType string) {
	t.Helper()
	sn := node(claim.Name, claim.Labels[v1alpha1.LabelNodePool], 0)
	sn.Node.Labels[corev1.LabelInstanceTypeStable] = instanceType
	sn.Node.Status.Conditions[0].LastTransitionTime = metav1.NewTime(b.env.Clock.Now())
	b.env.Create(t, sn.Node)
	stored := claim.DeepCopy()
	claim.Status.ProviderID, claim.Status.NodeName = sn.Node.Spec.ProviderID, sn.Node.Name
	claim.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionInitialized, Status: metav1.ConditionTrue,
		Reason: "Initialized", LastTransitionTime: metav1.NewTime(b.env.Clock.Now())}}
	fatalIf(t, b.env.Client.Status().Patch(t.Context(), claim, client.MergeFrom(stored)))
	statetest.Eventually(t, 30*time.Second, func() error {
		for _, s := range b.env.Cluster.Snapshot(nil, nil).Nodes {
			if s.NodeClaim != nil && s.NodeClaim.Name == claim.Name && s.Node != nil &&
				meta.IsStatusConditionTrue(s.NodeClaim.Status.Conditions, v1alpha1.ConditionInitialized) {
				return nil
			}
		}
		return fmt.Errorf("the cluster state does not show %s initialized", claim.Name)
	})
}

// tainted reports whether the Node carries the disrupted taint.
func (b *bed) tainted(t *testing.T, name string) bool {
	t.Helper()
	node := &corev1.Node{}
	fatalIf(t, b.env.Client.Get(t.Context(), client.ObjectKey{Name: name}, node))
	return slices.ContainsFunc(node.Spec.Taints, func(tt corev1.Taint) bool { return tt.MatchTaint(&v1alpha1.DisruptedNoScheduleTaint) })
}

// gone waits until the claim is deleted.
func (b *bed) gone(t *testing.T, name string) {
	t.Helper()
	statetest.Eventually(t, 30*time.Second, func() error {
		err := b.env.Client.Get(t.Context(), client.ObjectKey{Name: name}, &v1alpha1.NodeClaim{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return errors.Join(err, fmt.Errorf("nodeclaim %s still exists", name))
	})
}
