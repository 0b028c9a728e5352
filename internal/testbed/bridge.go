package testbed

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/internal/nodeboot"
	"github.com/stowage-dev/stowage/internal/testenv"
	"github.com/stowage-dev/stowage/internal/userdatacheck"
)

// Bridge registers a Node for every emulated instance that is running, as
// the kubelet on the instance's image would (NodeFor): named after its
// private IP, with its provider id, the well-known labels, and the labels,
// taints, capacity and allocatable its user data and nodeadm's or
// Bottlerocket's rules give it, never Stowage's formulas. The Node carries the
// annotation kwok manages, so kwok marks it Ready, renews its lease and runs
// the pods bound to it. Each instance registers once: a Node deleted later is
// not brought back. With a BootDelay, an instance registers that long after
// its launch, on the emulator's clock, as a real node boots.
type Bridge struct {
	emu    *awsemu.Emulator
	kube   client.Client
	boot   BootDelay
	paused atomic.Bool

	mu         sync.Mutex
	registered map[string]string            // instance id -> node name
	kubelets   map[string]*nodeboot.Kubelet // node name -> its kubelet's configuration
}

// NewBridge returns a bridge from the emulator's instances to Nodes written
// through kube, registering each boot after its launch (at once when zero).
func NewBridge(emu *awsemu.Emulator, kube client.Client, boot BootDelay) *Bridge {
	return &Bridge{emu: emu, kube: kube, boot: boot, registered: map[string]string{}, kubelets: map[string]*nodeboot.Kubelet{}}
}

// Pause stops registering Nodes, as if every new kubelet hung; Resume
// registers them again.
func (b *Bridge) Pause() { b.paused.Store(true) }

// Resume undoes Pause.
func (b *Bridge) Resume() { b.paused.Store(false) }

// Registered returns instance id -> node name for every Node registered.
func (b *Bridge) Registered() map[string]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[string]string, len(b.registered))
	for k, v := range b.registered {
		out[k] = v
	}
	return out
}

// Kubelet returns the configuration the kubelet of a registered Node runs
// with (its cluster DNS, max pods, reservations).
func (b *Bridge) Kubelet(node string) (*nodeboot.Kubelet, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	k, ok := b.kubelets[node]
	return k, ok
}

// Run calls Sync every interval until ctx ends. A failed registration is
// retried on the next pass; onError, when not nil, hears of it.
func (b *Bridge) Run(ctx context.Context, interval time.Duration, onError func(error)) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		if err := b.Sync(ctx); err != nil && ctx.Err() == nil && onError != nil {
			onError(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// Sync registers the Node of every running instance that has none yet,
// unless the bridge is paused.
func (b *Bridge) Sync(ctx context.Context) error {
	if b.paused.Load() {
		return nil
	}
	specs := map[string]awsemu.InstanceTypeSpec{}
	for _, s := range b.emu.InstanceTypes() {
		specs[s.Name] = s
	}
	now := b.emu.Clock().Now()
	for _, in := range b.emu.Instances() {
		if in.State != awsemu.StateRunning || b.isRegistered(in.ID) || now.Before(in.LaunchTime.Add(b.boot.For(in.ID))) {
			continue
		}
		spec, ok := specs[in.InstanceType]
		if !ok {
			return fmt.Errorf("instance %s: the emulator does not know its type %s", in.ID, in.InstanceType)
		}
		node, kubelet, err := NodeFor(in, spec, b.emu.Region(), bootOf(b.emu, in))
		if err != nil {
			return err
		}
		if err := b.kube.Create(ctx, node); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("registering node %s for instance %s: %w", node.Name, in.ID, err)
		}
		b.mu.Lock()
		b.registered[in.ID] = node.Name
		b.kubelets[node.Name] = kubelet
		b.mu.Unlock()
	}
	return nil
}

func (b *Bridge) isRegistered(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.registered[id]
	return ok
}

// Boot is what an instance boots from besides its user data: the family
// of its image and the volumes of its launch template.
type Boot struct {
	Family  string
	Volumes []nodeboot.Volume
}

// bootOf looks up an instance's image and launch template in the emulator.
func bootOf(emu *awsemu.Emulator, in awsemu.Instance) Boot {
	b := Boot{Family: nodeboot.AL2023}
	if img, ok := emu.ImageByID(in.ImageID); ok {
		b.Family = nodeboot.FamilyOfImage(img.Name)
	}
	b.Volumes = nodeboot.Volumes(emu, in)
	return b
}

// NodeFor is the Node the instance's kubelet registers, named after its
// private IP and carrying kwok's annotation: its user data read as a node of
// its image reads it (internal/nodeboot), each NodeConfig checked against
// nodeadm's schema first (internal/userdatacheck), so that user data a node
// would refuse registers no Node; the labels, taints and kubelet
// configuration that gives; the capacity from the type's EC2 facts and the
// allocatable by the kubelet's rule. It returns the kubelet's configuration
// too.
func NodeFor(in awsemu.Instance, spec awsemu.InstanceTypeSpec, region string, boot Boot) (*corev1.Node, *nodeboot.Kubelet, error) {
	name := nodeName(in.PrivateIP, region)
	node, k, err := userdatacheck.Boot(name, in, spec, region, boot.Family, boot.Volumes)
	if err != nil {
		return nil, nil, err
	}
	node.Annotations = map[string]string{testenv.KwokNodeAnnotation: testenv.KwokNodeAnnotationValue}
	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: in.PrivateIP}, {Type: corev1.NodeHostName, Address: name}}
	return node, k, nil
}

// nodeName is EC2's private DNS name of the address.
func nodeName(ip, region string) string {
	domain := region + ".compute.internal"
	if region == "us-east-1" {
		domain = "ec2.internal"
	}
	return "ip-" + strings.ReplaceAll(ip, ".", "-") + "." + domain
}
