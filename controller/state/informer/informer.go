// Package informer feeds a state.Cluster from informers: one small watch per
// kind, each turning add, update and delete events into the cluster's Update
// and Delete calls, and each adding its handler's HasSynced to the cluster's
// sync checks.
package informer

import (
	"context"
	"fmt"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/state"
)

// Source hands out informers; a controller-runtime cache (a manager's
// GetCache()) is one. Its scheme must know the core, apps, policy, storage,
// scheduling and stowage.dev/v1alpha1 types.
type Source interface {
	GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error)
}

// watch is one kind fed into the cluster.
type watch struct {
	object  client.Object
	handler toolscache.ResourceEventHandler
}

// Register adds the cluster's handlers to src's informers for every kind the
// cluster tracks. It does not start src: the caller (or the manager) does,
// and the cluster reports Synced once every handler has seen its initial list.
func Register(ctx context.Context, src Source, c *state.Cluster) error {
	watches := []watch{
		nodes(c), pods(c), nodeClaims(c), nodePools(c), nodeClasses(c), daemonSets(c), pdbs(c),
		pvcs(c), pvs(c), storageClasses(c), priorityClasses(c),
	}
	for _, w := range watches {
		inf, err := src.GetInformer(ctx, w.object, cache.BlockUntilSynced(false))
		if err != nil {
			return fmt.Errorf("getting the %T informer: %w", w.object, err)
		}
		reg, err := inf.AddEventHandler(w.handler)
		if err != nil {
			return fmt.Errorf("adding the %T handler: %w", w.object, err)
		}
		c.AddSyncCheck(reg.HasSynced)
	}
	return nil
}

// handler calls update on adds and updates and remove on deletes, unwrapping
// the tombstone of a delete the watch missed.
func handler[T client.Object](update, remove func(T)) toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if o, ok := obj.(T); ok {
				update(o)
			}
		},
		UpdateFunc: func(_, obj any) {
			if o, ok := obj.(T); ok {
				update(o)
			}
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if o, ok := obj.(T); ok {
				remove(o)
			}
		},
	}
}
