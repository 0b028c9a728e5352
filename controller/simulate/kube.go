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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
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
	mirror  *mirror
	tracker clienttesting.ObjectTracker
	// uids counts the UIDs given out, so that they repeat run to run.
	uids int
	// onWrite is told the object after every successful write, and whether it is gone.
	onWrite func(obj client.Object, gone bool)
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

func newKube(cluster *state.Cluster) (*kube, error) {
	scheme, err := operator.Scheme()
	if err != nil {
		return nil, err
	}
	k := &kube{cluster: cluster, mirror: newMirror(), onWrite: func(client.Object, bool) {}}
	// The plain tracker: the default one manages fields, and builds a REST
	// mapper on every write.
	tracker := clienttesting.NewObjectTracker(scheme, serializer.NewCodecFactory(scheme).UniversalDecoder())
	k.tracker = tracker
	b := fake.NewClientBuilder().WithScheme(scheme).WithObjectTracker(tracker).
		WithStatusSubresource(&v1alpha1.NodeClaim{}, &v1alpha1.NodePool{}, &v1alpha1.NodeClass{}, &corev1.Pod{}, &corev1.Node{})
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
			// The API server gives every object a UID; the fake client does not.
			if obj.GetUID() == "" {
				k.uids++
				obj.SetUID(types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", k.uids)))
			}
			return k.after(ctx, c, obj, c.Create(ctx, obj, opts...))
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			return k.after(ctx, c, obj, c.Update(ctx, obj, opts...))
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
			if err := k.applyMergePatch(obj, p); err != nil {
				return err
			}
			return k.after(ctx, c, obj, c.Update(ctx, obj))
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			return k.after(ctx, c, obj, c.Delete(ctx, obj, opts...))
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			if pod, ok := obj.(*corev1.Pod); ok && sub == "status" {
				return k.updatePodStatus(pod)
			}
			return k.after(ctx, c, obj, c.SubResource(sub).Update(ctx, obj, opts...))
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			if sub != "status" {
				return k.after(ctx, c, obj, c.SubResource(sub).Patch(ctx, obj, p, opts...))
			}
			if err := k.applyMergePatch(obj, p); err != nil {
				return err
			}
			return k.after(ctx, c, obj, c.Status().Update(ctx, obj))
		},
		SubResourceCreate: func(ctx context.Context, c client.Client, sub string, obj, subObj client.Object, opts ...client.SubResourceCreateOption) error {
			return k.after(ctx, c, obj, c.SubResource(sub).Create(ctx, obj, subObj, opts...))
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
	current := obj.DeepCopyObject().(client.Object)
	if err := k.mirror.get(client.ObjectKeyFromObject(obj), current); err != nil {
		return err
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

// updatePodStatus is a pod status update with the fake client's semantics
// (only the status changes; a stale resource version conflicts; the version
// then moves on) done on typed objects: kube-scheduler rewrites the condition
// of every pending pod whenever its message changes, and the fake client's
// JSON round trips made that most of a day's simulation.
func (k *kube) updatePodStatus(pod *corev1.Pod) error {
	stored := &corev1.Pod{}
	if err := k.mirror.get(client.ObjectKeyFromObject(pod), stored); err != nil {
		return err
	}
	if pod.ResourceVersion != "" && pod.ResourceVersion != stored.ResourceVersion {
		return apierrors.NewConflict(corev1.Resource("pods"), pod.Name, errors.New("object was modified"))
	}
	version, err := strconv.ParseUint(cmp.Or(stored.ResourceVersion, "0"), 10, 64)
	if err != nil {
		return fmt.Errorf("pod %s/%s has resource version %q: %w", pod.Namespace, pod.Name, stored.ResourceVersion, err)
	}
	stored.Status = *pod.Status.DeepCopy()
	stored.ResourceVersion = strconv.FormatUint(version+1, 10)
	if err := k.tracker.Update(corev1.SchemeGroupVersion.WithResource("pods"), stored, stored.Namespace); err != nil {
		return err
	}
	stored.DeepCopyInto(pod)
	k.mirror.put(stored)
	k.feed(stored, false)
	k.onWrite(stored, false)
	return nil
}

// after feeds the object's state after a successful write: its stored copy,
// or its deletion when it is gone.
func (k *kube) after(ctx context.Context, c client.Reader, obj client.Object, err error) error {
	if err != nil {
		return err
	}
	stored := obj.DeepCopyObject().(client.Object)
	getErr := c.Get(ctx, client.ObjectKeyFromObject(obj), stored)
	gone := apierrors.IsNotFound(getErr)
	if getErr != nil && !gone {
		return nil
	}
	if gone {
		k.mirror.remove(stored)
	} else {
		k.mirror.put(stored)
	}
	k.feed(stored, gone)
	k.onWrite(stored, gone)
	return nil
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
	}
}
