package headtohead

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/internal/testbed"
	"github.com/stowage-dev/stowage/internal/testenv"
)

// The systems under test, as BENCH lines name them.
const (
	Karpenter = "karpenter"
	Stowage   = "stowage"
)

// poolName names both systems' pool and node class.
const poolName = "default"

// driftAnnotation is the pool template annotation a drift phase changes.
const driftAnnotation = "perf.stowage.dev/drift-trigger"

// System is the node lifecycle manager under test: its pool (the suite's
// default NodePool: Linux, on-demand, consolidation WhenEmptyOrUnderutilized
// after 30s, a 100% budget, no expiry, no limits) and its controller process.
type System interface {
	// Name is Karpenter or Stowage.
	Name() string
	// Start installs the pool and starts the controller.
	Start(ctx context.Context, b *testbed.Bed) error
	// Process is the running controller.
	Process() *testbed.ControllerProcess
	// PoolLabel is the label its nodes carry, naming their pool.
	PoolLabel() string
	// DisruptedTaint is the taint it puts on a node it is taking away.
	DisruptedTaint() string
	// Drift changes the pool's template, so that every node drifts.
	Drift(ctx context.Context, b *testbed.Bed) error
}

// karpenter is the real Karpenter with its kwok cloud provider.
type karpenter struct {
	assets testenv.Karpenter
	env    Env
	proc   *testbed.ControllerProcess
}

func (k *karpenter) Name() string                        { return Karpenter }
func (k *karpenter) Process() *testbed.ControllerProcess { return k.proc }
func (k *karpenter) PoolLabel() string                   { return "karpenter.sh/nodepool" }
func (k *karpenter) DisruptedTaint() string              { return "karpenter.sh/disrupted" }

func (k *karpenter) Start(ctx context.Context, b *testbed.Bed) error {
	if err := b.InstallKarpenter(k.assets.CRDDir); err != nil {
		return err
	}
	class := obj("karpenter.kwok.sh/v1alpha1", "KWOKNodeClass", map[string]any{
		"nodeRegistrationDelay": RegistrationDelay.String()})
	pool := obj("karpenter.sh/v1", "NodePool", map[string]any{
		"disruption": map[string]any{"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "30s",
			"budgets": []any{map[string]any{"nodes": "100%"}}},
		"template": map[string]any{"spec": map[string]any{
			"expireAfter": "Never",
			"requirements": []any{
				map[string]any{"key": "kubernetes.io/os", "operator": "In", "values": []any{"linux"}},
				map[string]any{"key": "karpenter.sh/capacity-type", "operator": "In", "values": []any{"on-demand"}},
			},
			"nodeClassRef": map[string]any{"group": "karpenter.kwok.sh", "kind": "KWOKNodeClass", "name": poolName},
		}},
	})
	if err := b.Create(ctx, class, pool); err != nil {
		return err
	}
	dir, err := k.env.dir(Karpenter)
	if err != nil {
		return err
	}
	k.proc, err = b.StartKarpenter(testbed.KarpenterOptions{Assets: k.assets, Dir: dir,
		InstanceTypes: Catalogue(), Zones: zoneNames(b)})
	return err
}

func (k *karpenter) Drift(ctx context.Context, b *testbed.Bed) error {
	return annotateTemplate(ctx, b, obj("karpenter.sh/v1", "NodePool", nil))
}

// obj is a cluster-scoped object of Karpenter's, named poolName.
func obj(apiVersion, kind string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": poolName}}}
	if spec != nil {
		u.Object["spec"] = spec
	}
	return u
}

// stowage is `stowage run` built from this tree, on the emulator.
type stowage struct {
	binary string
	env    Env
	proc   *testbed.ControllerProcess
}

func (s *stowage) Name() string                        { return Stowage }
func (s *stowage) Process() *testbed.ControllerProcess { return s.proc }
func (s *stowage) PoolLabel() string                   { return v1alpha1.LabelNodePool }
func (s *stowage) DisruptedTaint() string              { return v1alpha1.TaintKeyDisrupted }

func (s *stowage) Start(ctx context.Context, b *testbed.Bed) error {
	tags := map[string]string{testbed.DiscoveryTag: b.Cluster}
	class := &v1alpha1.NodeClass{
		ObjectMeta: metav1.ObjectMeta{Name: poolName},
		Spec: v1alpha1.NodeClassSpec{
			AMISelectorTerms:           []v1alpha1.AMISelectorTerm{{Alias: "al2023@latest"}},
			SubnetSelectorTerms:        []v1alpha1.SelectorTerm{{Tags: tags}},
			SecurityGroupSelectorTerms: []v1alpha1.SecurityGroupSelectorTerm{{Tags: tags}},
			Role:                       b.NodeRole,
		},
	}
	after, never := v1alpha1.MustParseDuration("30s"), v1alpha1.MustParseDuration(v1alpha1.Never)
	pool := &v1alpha1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: poolName},
		Spec: v1alpha1.NodePoolSpec{
			Template: v1alpha1.NodeClaimTemplate{Spec: v1alpha1.NodeClaimTemplateSpec{
				Requirements: []v1alpha1.NodeSelectorRequirementWithMinValues{
					{Key: "kubernetes.io/os", Operator: "In", Values: []string{"linux"}},
					{Key: v1alpha1.LabelCapacityType, Operator: "In", Values: []string{v1alpha1.CapacityTypeOnDemand}},
				},
				NodeClassRef: &v1alpha1.NodeClassReference{Group: v1alpha1.Group, Kind: v1alpha1.DefaultNodeClassKind, Name: poolName},
				ExpireAfter:  &never,
			}},
			Disruption: v1alpha1.Disruption{ConsolidationPolicy: v1alpha1.ConsolidationPolicyWhenEmptyOrUnderutilized,
				ConsolidateAfter: &after, Budgets: []v1alpha1.Budget{{Nodes: "100%"}}},
		},
	}
	if err := b.Create(ctx, class, pool); err != nil {
		return err
	}
	dir, err := s.env.dir(Stowage)
	if err != nil {
		return err
	}
	s.proc, err = b.RunStowage(testbed.StowageProcessOptions{Binary: s.binary, Dir: dir})
	return err
}

func (s *stowage) Drift(ctx context.Context, b *testbed.Bed) error {
	return annotateTemplate(ctx, b, &v1alpha1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: poolName}})
}

// annotateTemplate sets driftAnnotation on the pool's template, as the
// suite's drift phase does: every node made from the template drifts.
func annotateTemplate(ctx context.Context, b *testbed.Bed, pool client.Object) error {
	patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{%q:%q}}}}}`, driftAnnotation, time.Now().UTC().Format(time.RFC3339Nano))
	if err := b.Admin.Patch(ctx, pool, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		return fmt.Errorf("annotating the pool's template: %w", err)
	}
	return nil
}

// Env is what running a system needs: the bed's binaries, Karpenter's
// assets, the stowage binary, and a folder for the controllers' files.
type Env struct {
	BinDir    string
	Karpenter testenv.Karpenter
	Stowage   string
	Dir       string
}

// System returns the named system, unstarted.
func (e Env) System(name string) (System, error) {
	switch name {
	case Karpenter:
		return &karpenter{assets: e.Karpenter, env: e}, nil
	case Stowage:
		return &stowage{binary: e.Stowage, env: e}, nil
	}
	return nil, fmt.Errorf("unknown system %q: want %s or %s", name, Karpenter, Stowage)
}

// dir makes a fresh folder for one run of the named system's controller.
func (e Env) dir(name string) (string, error) {
	return os.MkdirTemp(e.Dir, filepath.Base(name)+"-")
}
