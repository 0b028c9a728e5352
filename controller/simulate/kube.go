package simulate

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"

	jsonpatch "github.com/evanphx/json-patch/v5"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/nodeclaim"
	"github.com/stowage-dev/stowage/controller/operator"
	"github.com/stowage-dev/stowage/controller/state"
)

// kube is the simulated API server: controller-runtime's in-memory client,
// with every write fed to the cluster state (as informers would) and to the
// listeners that wake the controllers.
type kube struct {
	client.Client
	cluster *state.Cluster
	clk     clock.PassiveClock
	mirror  *mirror
	tracker clienttesting.ObjectTracker
	// behind are the pods whose status writePodStatus stored in the mirror
	// only: the tracker gets their latest version before any write through
	// the fake client reads it (catchUp). kube-scheduler rewrites every
	// pending pod whenever the node count changes, and the tracker's deep
	// copy of each was a quarter of day-150k's first minutes.
	behind map[client.ObjectKey]bool
	scheme *runtime.Scheme
	// uids counts the UIDs given out, so that they repeat run to run.
	uids int
	// onWrite is told the object after every successful write, and whether it is gone.
	onWrite func(obj client.Object, gone bool)
	// onEvict is told the pod of every eviction the API server grants, before it goes.
	onEvict func(pod *corev1.Pod)
}

// indexRecorder collects the field indexes the controllers ask for, so that
// the fake client can be built with them.
type indexRecorder struct {
	builder *fake.ClientBuilder
	mirror  *mirror
}

func (r *indexRecorder) IndexField(_ context.Context, obj client.Object, field string, fn client.IndexerFunc) error {
	r.builder = r.builder.WithIndex(obj, field, fn)
	r.mirror.index(obj, field, fn)
	return nil
}

func newKube(cluster *state.Cluster, clk clock.PassiveClock) (*kube, error) {
	scheme, err := operator.Scheme()
	if err != nil {
		return nil, err
	}
	k := &kube{cluster: cluster, clk: clk, mirror: newMirror(), behind: map[client.ObjectKey]bool{},
		onWrite: func(client.Object, bool) {}, onEvict: func(*corev1.Pod) {}}
	// The plain tracker: the default one manages fields, and builds a REST
	// mapper on every write. The status subresource is kept here (see
	// keepStatus and updateStatus), not by the fake client, whose emulation
	// of it makes two JSON round trips of every write.
	tracker := clienttesting.NewObjectTracker(scheme, serializer.NewCodecFactory(scheme).UniversalDecoder())
	k.tracker, k.scheme = tracker, scheme
	b := fake.NewClientBuilder().WithScheme(scheme).WithObjectTracker(tracker)
	rec := &indexRecorder{builder: b, mirror: k.mirror}
	if err := nodeclaim.IndexFields(context.Background(), rec, true); err != nil {
		return nil, err
	}
	k.Client = rec.builder.WithInterceptorFuncs(interceptor.Funcs{
		Get: func(_ context.Context, _ client.WithWatch, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
			return k.mirror.get(key, obj)
		},
		List: func(_ context.Context, _ client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			return k.mirror.list(list, opts...)
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if err := k.catchUp(obj); err != nil {
				return err
			}
			// The API server gives every object a UID; the fake client does not.
			if obj.GetUID() == "" {
				k.uids++
				obj.SetUID(types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", k.uids)))
			}
			return k.after(obj, c.Create(ctx, obj, opts...))
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if err := k.catchUp(obj); err != nil {
				return err
			}
			k.keepStatus(obj)
			return k.after(obj, c.Update(ctx, obj, opts...))
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
			if err := k.catchUp(obj); err != nil {
				return err
			}
			if err := k.applyMergePatch(obj, p); err != nil {
				return err
			}
			k.keepStatus(obj)
			return k.after(obj, c.Update(ctx, obj))
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			if err := k.catchUp(obj); err != nil {
				return err
			}
			return k.after(obj, c.Delete(ctx, obj, opts...))
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			if err := k.catchUp(obj); err != nil {
				return err
			}
			if sub == "status" {
				return k.updateStatus(ctx, c, obj)
			}
			return k.after(obj, c.SubResource(sub).Update(ctx, obj, opts...))
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			if err := k.catchUp(obj); err != nil {
				return err
			}
			if sub != "status" {
				return k.after(obj, c.SubResource(sub).Patch(ctx, obj, p, opts...))
			}
			if err := k.applyMergePatch(obj, p); err != nil {
				return err
			}
			return k.updateStatus(ctx, c, obj)
		},
		SubResourceCreate: func(ctx context.Context, c client.Client, sub string, obj, subObj client.Object, opts ...client.SubResourceCreateOption) error {
			if err := k.catchUp(obj); err != nil {
				return err
			}
			if _, isPod := obj.(*corev1.Pod); isPod && sub == "eviction" {
				return k.evict(ctx, c, obj)
			}
			return k.after(obj, c.SubResource(sub).Create(ctx, obj, subObj, opts...))
		},
	}).Build()
	return k, nil
}

// applyMergePatch applies a JSON merge patch to the stored object, into obj,
// so that the write can go through Update: the fake client's own Patch builds
// a REST mapper on every call, which dominated the simulator's profile. An
// optimistic lock in the patch carries its resourceVersion, which Update checks.
func (k *kube) applyMergePatch(obj client.Object, p client.Patch) error {
	if p.Type() != types.MergePatchType {
		return fmt.Errorf("simulated API server: patch type %s is not supported; use client.MergeFrom", p.Type())
	}
	data, err := p.Data(obj)
	if err != nil {
		return err
	}
	current, ok := k.mirror.peekObject(obj)
	if !ok {
		return k.notFound(obj)
	}
	doc, err := json.Marshal(current)
	if err != nil {
		return err
	}
	patched, err := jsonpatch.MergePatch(doc, data)
	if err != nil {
		return fmt.Errorf("applying a merge patch to %s: %w", obj.GetName(), err)
	}
	reset := reflect.New(reflect.TypeOf(obj).Elem()).Interface()
	if err := json.Unmarshal(patched, reset); err != nil {
		return err
	}
	reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(reset).Elem())
	return nil
}

// withStatus are the kinds with a status subresource: their status is
// written only through it.
var withStatus = map[reflect.Type]bool{
	reflect.TypeFor[*v1alpha1.NodeClaim](): true, reflect.TypeFor[*v1alpha1.NodePool](): true,
	reflect.TypeFor[*v1alpha1.NodeClass](): true, reflect.TypeFor[*corev1.Pod](): true, reflect.TypeFor[*corev1.Node](): true,
	reflect.TypeFor[*policyv1.PodDisruptionBudget](): true,
}

// keepStatus gives an object about to be updated (or patched) outside its
// status subresource the stored status, as the API server ignores the
// status of such a write.
func (k *kube) keepStatus(obj client.Object) {
	if !withStatus[reflect.TypeOf(obj)] {
		return
	}
	current, ok := k.mirror.peekObject(obj)
	if !ok {
		return // the update fails as not found
	}
	reflect.ValueOf(obj).Elem().FieldByName("Status").Set(statusCopy(current))
}

// statusCopy is a deep copy of the status of obj, a kind withStatus.
func statusCopy(obj client.Object) reflect.Value {
	return reflect.ValueOf(obj).Elem().FieldByName("Status").Addr().MethodByName("DeepCopy").Call(nil)[0].Elem()
}

// updateStatus is a write to the status subresource: the stored object with
// obj's status, conflicting when obj's resourceVersion is stale; obj then
// holds what was stored.
func (k *kube) updateStatus(ctx context.Context, c client.Writer, obj client.Object) error {
	if pod, ok := obj.(*corev1.Pod); ok {
		return k.updatePodStatus(pod)
	}
	if pdb, ok := obj.(*policyv1.PodDisruptionBudget); ok {
		return k.updatePDBStatus(pdb)
	}
	if node, ok := obj.(*corev1.Node); ok {
		return k.updateNodeStatus(node)
	}
	current, ok := k.mirror.peekObject(obj)
	if !ok || !withStatus[reflect.TypeOf(obj)] {
		return k.notFound(obj) // as the fake client answers for a kind without the subresource
	}
	// The stored object is never changed in place: the new one shares all
	// but its status and version with it.
	updated := reflect.New(reflect.TypeOf(current).Elem())
	updated.Elem().Set(reflect.ValueOf(current).Elem())
	updated.Elem().FieldByName("Status").Set(statusCopy(obj))
	write := updated.Interface().(client.Object)
	write.SetResourceVersion(obj.GetResourceVersion())
	if err := c.Update(ctx, write); err != nil {
		return err
	}
	reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(write.DeepCopyObject()).Elem())
	return k.after(obj, nil)
}

func (k *kube) notFound(obj client.Object) error {
	gvk, _ := apiutil.GVKForObject(obj, k.scheme)
	return apierrors.NewNotFound(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, obj.GetName())
}

// updatePodStatus is a pod status update with the fake client's semantics
// (only the status changes; a stale resource version conflicts; the version
// then moves on) done on typed objects: kube-scheduler rewrites the condition
// of every pending pod whenever its message changes, and the fake client's
// JSON round trips made that most of a day's simulation.
func (k *kube) updatePodStatus(pod *corev1.Pod) error {
	stored, err := k.writePodStatus(client.ObjectKeyFromObject(pod), pod.ResourceVersion, *pod.Status.DeepCopy())
	if err != nil {
		return err
	}
	stored.DeepCopyInto(pod)
	return nil
}

// writePodStatus stores status, which it keeps, as the pod's, and returns
// the stored pod, which the caller must not change. A version other than the
// stored one conflicts; an empty one does not.
func (k *kube) writePodStatus(key client.ObjectKey, version string, status corev1.PodStatus) (*corev1.Pod, error) {
	current, ok := peek[*corev1.Pod](k.mirror, key)
	if !ok {
		return nil, apierrors.NewNotFound(corev1.Resource("pods"), key.Name)
	}
	if version != "" && version != current.ResourceVersion {
		return nil, apierrors.NewConflict(corev1.Resource("pods"), key.Name, errors.New("object was modified"))
	}
	n, err := strconv.ParseUint(cmp.Or(current.ResourceVersion, "0"), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("pod %s has resource version %q: %w", key, current.ResourceVersion, err)
	}
	// The stored pod is never changed in place: the new one shares all but
	// its status and version with it.
	updated := *current
	stored := &updated
	stored.Status = status
	stored.ResourceVersion = strconv.FormatUint(n+1, 10)
	k.behind[key] = true
	k.mirror.adopt(stored)
	k.feed(stored, false)
	k.onWrite(stored, false)
	return stored, nil
}

// catchUp gives the tracker the latest version of obj when it is a pod
// whose status only the mirror holds.
func (k *kube) catchUp(obj client.Object) error {
	if _, isPod := obj.(*corev1.Pod); !isPod {
		return nil
	}
	key := client.ObjectKeyFromObject(obj)
	if !k.behind[key] {
		return nil
	}
	delete(k.behind, key)
	current, ok := peek[*corev1.Pod](k.mirror, key)
	if !ok {
		return nil
	}
	return k.tracker.Update(corev1.SchemeGroupVersion.WithResource("pods"), current, current.Namespace)
}

// after feeds the object's state after a successful write: its stored copy,
// or its deletion when it is gone.
func (k *kube) after(obj client.Object, err error) error {
	if err != nil {
		return err
	}
	stored, getErr := k.stored(obj)
	gone := apierrors.IsNotFound(getErr)
	switch {
	case gone:
		stored = obj.DeepCopyObject().(client.Object)
		k.mirror.remove(stored)
	case getErr != nil:
		return nil
	default:
		k.mirror.adopt(stored)
	}
	k.feed(stored, gone)
	k.onWrite(stored, gone)
	return nil
}

// stored returns a copy of what the tracker stores for obj, its kind set as
// the fake client's Get sets it; read from the tracker directly, as the fake
// client's Get makes a JSON round trip of every object.
func (k *kube) stored(obj client.Object) (client.Object, error) {
	gvk, err := apiutil.GVKForObject(obj, k.scheme)
	if err != nil {
		return nil, err
	}
	gvr, _ := meta.UnsafeGuessKindToResource(gvk)
	o, err := k.tracker.Get(gvr, obj.GetNamespace(), obj.GetName())
	if err != nil {
		return nil, err
	}
	stored, ok := o.(client.Object)
	if !ok {
		return nil, fmt.Errorf("simulated API server: stored %s %s is a %T", gvk.Kind, obj.GetName(), o)
	}
	stored.GetObjectKind().SetGroupVersionKind(gvk)
	return stored, nil
}

// feed updates the cluster state as an informer would.
func (k *kube) feed(obj runtime.Object, gone bool) {
	switch o := obj.(type) {
	case *corev1.Pod:
		if gone {
			k.cluster.DeletePod(o)
		} else {
			k.cluster.UpdatePod(o)
		}
	case *corev1.Node:
		if gone {
			k.cluster.DeleteNode(o)
		} else {
			k.cluster.UpdateNode(o)
		}
	case *v1alpha1.NodeClaim:
		if gone {
			k.cluster.DeleteNodeClaim(o)
		} else {
			k.cluster.UpdateNodeClaim(o)
		}
	case *v1alpha1.NodePool:
		if gone {
			k.cluster.DeleteNodePool(o)
		} else {
			k.cluster.UpdateNodePool(o)
		}
	case *v1alpha1.NodeClass:
		if gone {
			k.cluster.DeleteNodeClass(o)
		} else {
			k.cluster.UpdateNodeClass(o)
		}
	case *appsv1.DaemonSet:
		if gone {
			k.cluster.DeleteDaemonSet(o)
		} else {
			k.cluster.UpdateDaemonSet(o)
		}
	case *policyv1.PodDisruptionBudget:
		if gone {
			k.cluster.DeletePodDisruptionBudget(o)
		} else {
			k.cluster.UpdatePodDisruptionBudget(o)
		}
	}
}
