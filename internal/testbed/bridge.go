package testbed

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/catalogue"
	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/internal/testenv"
)

// Bridge registers a Node for every emulated instance that is running, as
// the kubelet on the instance's image would: named after its private IP,
// with its provider id, the capacity and allocatable of its instance type
// (the EKS formulas of controller/catalogue), the well-known labels, and the
// labels and taints its user data passes the kubelet. The Node carries the
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
	registered map[string]string // instance id -> node name
}

// NewBridge returns a bridge from the emulator's instances to Nodes written
// through kube, registering each boot after its launch (at once when zero).
func NewBridge(emu *awsemu.Emulator, kube client.Client, boot BootDelay) *Bridge {
	return &Bridge{emu: emu, kube: kube, boot: boot, registered: map[string]string{}}
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
		node, err := NodeFor(in, spec, b.emu.Region())
		if err != nil {
			return err
		}
		if err := b.kube.Create(ctx, node); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("registering node %s for instance %s: %w", node.Name, in.ID, err)
		}
		b.mu.Lock()
		b.registered[in.ID] = node.Name
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

// NodeFor is the Node the instance's kubelet registers.
func NodeFor(in awsemu.Instance, spec awsemu.InstanceTypeSpec, region string) (*corev1.Node, error) {
	flagLabels, taints, err := KubeletFlags(in.UserData)
	if err != nil {
		return nil, fmt.Errorf("instance %s: %w", in.ID, err)
	}
	name := nodeName(in.PrivateIP, region)
	labels := map[string]string{
		corev1.LabelHostname:           name,
		corev1.LabelOSStable:           "linux",
		corev1.LabelArchStable:         spec.Arch,
		corev1.LabelInstanceTypeStable: in.InstanceType,
		corev1.LabelTopologyZone:       in.Zone,
		corev1.LabelTopologyRegion:     region,
	}
	for k, v := range flagLabels {
		labels[k] = v
	}
	info := infoOf(spec)
	capacity := catalogue.Capacity(info, nil, catalogue.DefaultRootVolumeGiB)
	allocatable := capacity.Sub(catalogue.ComputeOverhead(info, capacity, nil).Total())
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Labels:      labels,
			Annotations: map[string]string{testenv.KwokNodeAnnotation: testenv.KwokNodeAnnotationValue},
		},
		Spec: corev1.NodeSpec{ProviderID: "aws:///" + in.Zone + "/" + in.ID, Taints: taints},
		Status: corev1.NodeStatus{
			Capacity:    capacity.List(),
			Allocatable: allocatable.List(),
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: in.PrivateIP},
				{Type: corev1.NodeHostName, Address: name},
			},
		},
	}, nil
}

// nodeName is EC2's private DNS name of the address.
func nodeName(ip, region string) string {
	domain := region + ".compute.internal"
	if region == "us-east-1" {
		domain = "ec2.internal"
	}
	return "ip-" + strings.ReplaceAll(ip, ".", "-") + "." + domain
}

// infoOf describes the emulated type as DescribeInstanceTypes does to the
// AWS layer, so that the Node's allocatable is what Stowage planned with.
func infoOf(s awsemu.InstanceTypeSpec) catalogue.Info {
	return catalogue.Info{
		Name: s.Name, Arch: s.Arch, VCPU: int64(s.VCPU), MemoryMiB: s.MemoryMiB,
		GPUCount: int64(s.GPUCount), GPUName: s.GPUName, GPUManufacturer: s.GPUManufacturer,
		AcceleratorCount: int64(s.AcceleratorCount), AcceleratorName: s.AcceleratorName,
		AcceleratorManufacturer: s.AcceleratorMfr, MaxENIs: int64(s.MaxENIs), IPv4PerENI: int64(s.IPv4PerENI),
		MaxPodsENI: int64(s.MaxENIs)*(int64(s.IPv4PerENI)-1) + 2,
	}
}

// KubeletFlags reads the labels and taints the kubelet registers with from
// the (base64) user data: the --node-labels and --register-with-taints flags
// of an AL2023 NodeConfig, or the node-labels and node-taints tables of
// Bottlerocket's TOML settings.
func KubeletFlags(userData string) (map[string]string, []corev1.Taint, error) {
	raw, err := base64.StdEncoding.DecodeString(userData)
	if err != nil {
		return nil, nil, fmt.Errorf("decoding the user data: %w", err)
	}
	labels := map[string]string{}
	var taints []corev1.Taint
	table := "" // the Bottlerocket TOML table the line is in
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimPrefix(strings.TrimSpace(line), "- ")
		var more []corev1.Taint
		switch {
		case strings.HasPrefix(line, "["):
			table = strings.Trim(line, "[]")
		case strings.HasPrefix(line, "--node-labels="):
			for _, kv := range splitList(strings.TrimPrefix(line, "--node-labels=")) {
				k, val, _ := strings.Cut(kv, "=")
				labels[k] = val
			}
		case strings.HasPrefix(line, "--register-with-taints="):
			more, err = parseTaints(splitList(strings.TrimPrefix(line, "--register-with-taints=")))
		case table == "settings.kubernetes.node-labels" && line != "":
			err = tomlLabel(line, labels)
		case table == "settings.kubernetes.node-taints" && line != "":
			more, err = tomlTaints(line)
		}
		if err != nil {
			return nil, nil, err
		}
		taints = append(taints, more...)
	}
	return labels, taints, nil
}

func parseTaints(specs []string) ([]corev1.Taint, error) {
	var out []corev1.Taint
	for _, s := range specs {
		t, err := parseTaint(s)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// tomlLabel reads a "key" = "value" line of Bottlerocket's node-labels.
func tomlLabel(line string, labels map[string]string) error {
	k, v, err := tomlPair(line)
	if err != nil {
		return err
	}
	if labels[k], err = strconv.Unquote(v); err != nil {
		return fmt.Errorf("node label %s: value %s is not a quoted string", k, v)
	}
	return nil
}

// tomlTaints reads a "key" = ["value:Effect", ...] line of Bottlerocket's node-taints.
func tomlTaints(line string) ([]corev1.Taint, error) {
	k, v, err := tomlPair(line)
	if err != nil {
		return nil, err
	}
	var specs []string
	for _, item := range splitList(strings.Trim(v, "[] ")) {
		spec, err := strconv.Unquote(strings.TrimSpace(item))
		if err != nil {
			return nil, fmt.Errorf("node taint %s: %s is not a quoted string", k, item)
		}
		specs = append(specs, k+"="+spec)
	}
	return parseTaints(specs)
}

// tomlPair splits "key" = value, unquoting the key.
func tomlPair(line string) (string, string, error) {
	qk, v, ok := strings.Cut(line, "=")
	k, err := strconv.Unquote(strings.TrimSpace(qk))
	if !ok || err != nil {
		return "", "", fmt.Errorf("user data line %q is not \"key\" = value", line)
	}
	return k, strings.TrimSpace(v), nil
}

func splitList(v string) []string {
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

// parseTaint reads the kubelet's key[=value]:effect.
func parseTaint(s string) (corev1.Taint, error) {
	kv, effect, ok := strings.Cut(s, ":")
	if !ok || effect == "" {
		return corev1.Taint{}, fmt.Errorf("taint %q has no effect: want key[=value]:effect", s)
	}
	k, v, _ := strings.Cut(kv, "=")
	return corev1.Taint{Key: k, Value: v, Effect: corev1.TaintEffect(effect)}, nil
}
