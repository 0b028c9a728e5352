package tfbed

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/deploy"
	"github.com/stowage-dev/stowage/internal/testbed"
)

// Kubelet stands in for the kubelet the bed has not for the controller's
// own pods: whenever a Deployment of Stowage (labelled
// app.kubernetes.io/name=stowage) exists in any namespace, it runs the
// controller as that Deployment and its service account describe
// (RunController), restarting it when either changes (an upgrade) and
// stopping it when the Deployment goes (an uninstall). What installed the
// Deployment (helm, kubectl, Terraform) does not matter.
type Kubelet struct {
	e      *Env
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	running *testbed.ControllerProcess
	spec    string // what running was started from
	logs    []string
	errs    []error
}

// StartKubelet starts watching for the controller's Deployment; Stop ends it
// and the controller it runs.
func (e *Env) StartKubelet() *Kubelet {
	ctx, cancel := context.WithCancel(context.Background())
	k := &Kubelet{e: e, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(k.done)
		_ = wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			if err := k.sync(ctx); err != nil {
				k.mu.Lock()
				k.errs = append(k.errs, err)
				k.mu.Unlock()
			}
			return false, nil
		})
	}()
	return k
}

// sync starts, restarts or stops the controller to match the Deployment.
func (k *Kubelet) sync(ctx context.Context) error {
	var ds appsv1.DeploymentList
	if err := k.e.Bed.Admin.List(ctx, &ds, client.MatchingLabels{"app.kubernetes.io/name": deploy.Name}); err != nil {
		return err
	}
	spec, ns := "", ""
	if len(ds.Items) > 0 && ds.Items[0].DeletionTimestamp == nil {
		d := ds.Items[0]
		var sa corev1.ServiceAccount
		if err := k.e.Bed.Admin.Get(ctx, client.ObjectKey{Namespace: d.Namespace, Name: d.Spec.Template.Spec.ServiceAccountName}, &sa); err != nil {
			return client.IgnoreNotFound(err) // not yet: the next round
		}
		b, _ := json.Marshal([]any{d.Namespace, d.Spec.Template, sa.Annotations})
		spec, ns = fmt.Sprintf("%x", sha256.Sum256(b)), d.Namespace
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if spec == k.spec {
		return nil
	}
	if k.running != nil {
		_ = k.running.Stop() // the Deployment went or changed: the old pod goes
		k.running = nil
	}
	k.spec = ""
	if spec == "" {
		return nil
	}
	p, err := k.e.RunController(ctx, ns)
	if err != nil {
		return err
	}
	k.running, k.spec, k.logs = p, spec, append(k.logs, p.LogPath)
	return nil
}

// Running is the controller now running, or nil.
func (k *Kubelet) Running() *testbed.ControllerProcess {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.running
}

// Report is what went wrong and the tail of every controller's log, for a
// failing test.
func (k *Kubelet) Report(lines int) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := fmt.Sprintf("kubelet errors: %v\n", k.errs)
	for _, path := range k.logs {
		out += fmt.Sprintf("--- %s\n%s\n", path, LogTail(&testbed.ControllerProcess{LogPath: path}, lines))
	}
	return out
}

// Stop ends the watch and the controller.
func (k *Kubelet) Stop() {
	k.cancel()
	<-k.done
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.running != nil {
		_ = k.running.Stop()
		k.running = nil
	}
}
