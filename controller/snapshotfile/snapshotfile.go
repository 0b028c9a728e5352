// Package snapshotfile reads a cluster snapshot from a multi-document YAML stream
// of Kubernetes objects (what `kubectl get ... -o yaml` prints) so that a user can
// ask what Stowage would decide on their cluster now.
package snapshotfile

import (
	"errors"
	"io"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	autoscalingv1beta1 "github.com/stowage-dev/stowage/controller/apis/autoscaling/v1beta1"
	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/capacitybuffer"
	"github.com/stowage-dev/stowage/controller/karpenter"
	"github.com/stowage-dev/stowage/controller/manifest"
)

// Objects are the objects of a snapshot file, by kind, in file order.
type Objects struct {
	Pods                   []*corev1.Pod
	Nodes                  []*corev1.Node
	DaemonSets             []*appsv1.DaemonSet
	PersistentVolumeClaims []*corev1.PersistentVolumeClaim
	PersistentVolumes      []*corev1.PersistentVolume
	StorageClasses         []*storagev1.StorageClass
	NodePools              []*v1alpha1.NodePool
	NodeClasses            []*v1alpha1.NodeClass
	NodeClaims             []*v1alpha1.NodeClaim
	// PriorityClasses give their value to the pods that name them and have
	// no spec.priority (a pod written by hand rather than admitted).
	PriorityClasses []*schedulingv1.PriorityClass
	// CapacityBuffers keep room for pods that do not exist yet, of the
	// shapes BufferObjects give (buffers.go).
	CapacityBuffers []*autoscalingv1beta1.CapacityBuffer
	BufferObjects   capacitybuffer.Objects

	// Warnings are what converting Karpenter's objects could not carry over,
	// each on its line: the caller prints them.
	Warnings []*manifest.Error

	// object -> where Read found it, to place validation errors on their lines
	where map[any]*manifest.Object
	// "Kind namespace/name" -> the line Read found it on, to refuse duplicates
	seen map[string]int
}

// ErrEmpty is Read's error for a stream without a single object.
var ErrEmpty = errors.New("the snapshot holds no objects: write one with `kubectl get nodepools,nodeclasses,nodeclaims,nodes,pods,daemonsets,pv,pvc,storageclasses,priorityclasses,capacitybuffers,podtemplates -A -o yaml`")

// Read parses every document, strictly, as the API server would: an unknown
// kind or field, an apiVersion that is not the kind's, a duplicate object, a
// negative request or an invalid object is an error naming its line, the
// object and the field; a pod without a namespace is in "default". A stream
// with no object at all is an error too. Karpenter's NodePools,
// EC2NodeClasses and NodeClaims are converted to Stowage's (Warnings lists
// what the conversion left out), so a dump of a Karpenter cluster reads as is.
func Read(r io.Reader) (*Objects, error) {
	objs := &Objects{where: map[any]*manifest.Object{}, seen: map[string]int{}}
	list, err := manifest.Read(r)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, m := range list {
		if err := objs.add(m); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(list) == 0 {
		return nil, ErrEmpty
	}
	if err := objs.validate(); err != nil {
		return nil, err
	}
	return objs, nil
}

// kind is how a snapshot reads one kind of object.
type kind struct {
	apiVersion string
	namespaced bool
	decode     func(*Objects, *manifest.Object) (metav1.Object, error)
}

var kinds = map[string]kind{
	"Pod":       {"v1", true, func(o *Objects, m *manifest.Object) (metav1.Object, error) { return decodeInto(&o.Pods, m) }},
	"Node":      {"v1", false, func(o *Objects, m *manifest.Object) (metav1.Object, error) { return decodeInto(&o.Nodes, m) }},
	"DaemonSet": {"apps/v1", true, func(o *Objects, m *manifest.Object) (metav1.Object, error) { return decodeInto(&o.DaemonSets, m) }},
	"PersistentVolumeClaim": {"v1", true, func(o *Objects, m *manifest.Object) (metav1.Object, error) {
		return decodeInto(&o.PersistentVolumeClaims, m)
	}},
	"PersistentVolume": {"v1", false, func(o *Objects, m *manifest.Object) (metav1.Object, error) {
		return decodeInto(&o.PersistentVolumes, m)
	}},
	"StorageClass": {"storage.k8s.io/v1", false, func(o *Objects, m *manifest.Object) (metav1.Object, error) { return decodeInto(&o.StorageClasses, m) }},
	"NodePool":     {v1alpha1.SchemeGroupVersion.String(), false, func(o *Objects, m *manifest.Object) (metav1.Object, error) { return decodeInto(&o.NodePools, m) }},
	"NodeClass":    {v1alpha1.SchemeGroupVersion.String(), false, func(o *Objects, m *manifest.Object) (metav1.Object, error) { return decodeInto(&o.NodeClasses, m) }},
	"NodeClaim":    {v1alpha1.SchemeGroupVersion.String(), false, func(o *Objects, m *manifest.Object) (metav1.Object, error) { return decodeInto(&o.NodeClaims, m) }},
	"PriorityClass": {"scheduling.k8s.io/v1", false, func(o *Objects, m *manifest.Object) (metav1.Object, error) {
		return decodeInto(&o.PriorityClasses, m)
	}},
}

// add decodes one object after checking its kind, apiVersion, name and namespace.
func (o *Objects) add(m *manifest.Object) error {
	if karpenter.Is(m.APIVersion, m.Kind) {
		return o.addKarpenter(m)
	}
	k, ok := kinds[m.Kind]
	if !ok {
		return m.Errorf("kind", "kind %q is not part of a snapshot; use %s", m.Kind, strings.Join(kindNames(), ", "))
	}
	if servedAs(m.Kind, m.APIVersion) != k.apiVersion {
		return apiVersionError(m, k.apiVersion)
	}
	if err := defaultNamespace(m, k.namespaced); err != nil {
		return err
	}
	if first, dup := o.seen[m.ID()]; dup {
		return m.Errorf("metadata.name", "%s is already on line %d; remove one of them", m.ID(), first)
	}
	obj, err := k.decode(o, m)
	if err != nil {
		return err
	}
	obj.SetNamespace(m.Namespace)
	o.seen[m.ID()], o.where[obj] = m.Line(), m
	return nil
}

// addKarpenter converts a Karpenter NodePool, EC2NodeClass or NodeClaim to
// Stowage's, keeping the warnings.
func (o *Objects) addKarpenter(m *manifest.Object) error {
	if m.Name == "" {
		return m.Errorf("metadata.name", "Required value: name the object")
	}
	c, err := karpenter.Convert(m)
	if err != nil {
		return err
	}
	var obj metav1.Object
	switch {
	case c.NodePool != nil:
		obj, o.NodePools = c.NodePool, append(o.NodePools, c.NodePool)
	case c.NodeClass != nil:
		obj, o.NodeClasses = c.NodeClass, append(o.NodeClasses, c.NodeClass)
	default:
		obj, o.NodeClaims = c.NodeClaim, append(o.NodeClaims, c.NodeClaim)
	}
	id := karpenter.Kinds[m.Kind].Stowage + " " + m.Name
	if first, dup := o.seen[id]; dup {
		return m.Errorf("metadata.name", "%s is already on line %d (once converted, %s %s is a %s); remove one of them", id, first, m.APIVersion, m.Kind, id)
	}
	o.seen[id], o.where[obj] = m.Line(), m
	o.Warnings = append(o.Warnings, c.Warnings()...)
	return nil
}

// defaultNamespace puts a namespaced object without one in "default", as the
// API server does, and refuses a name the API server would.
func defaultNamespace(m *manifest.Object, namespaced bool) error {
	switch {
	case m.Name == "":
		return m.Errorf("metadata.name", "Required value: name the object")
	case namespaced && m.Namespace == "":
		m.Namespace = metav1.NamespaceDefault
	case !namespaced && m.Namespace != "":
		return m.Errorf("metadata.namespace", "%s is cluster-scoped; remove the namespace", m.Kind)
	}
	return nil
}

// apiVersionError refuses an apiVersion that is not the kind's, and says how
// to convert what Stowage knows another form of.
func apiVersionError(m *manifest.Object, want string) error {
	group, version, _ := strings.Cut(m.APIVersion, "/")
	if (group == v1alpha1.KarpenterGroup || group == v1alpha1.KarpenterAWSGroup) && version != "v1" {
		return m.Errorf("apiVersion", "%s is Karpenter's pre-v1 API; Stowage reads v1: dump the objects again from a cluster running Karpenter 1.x (kubectl get nodepools.v1.karpenter.sh -o yaml)", m.APIVersion)
	}
	if m.APIVersion == karpenter.APIVersionCore || m.APIVersion == karpenter.APIVersionAWS {
		return m.Errorf("apiVersion", "%s %s is not a Karpenter kind Stowage reads (%s NodePool and NodeClaim, %s EC2NodeClass); for Stowage's %s, use %s",
			m.APIVersion, m.Kind, karpenter.APIVersionCore, karpenter.APIVersionAWS, m.Kind, want)
	}
	return m.Errorf("apiVersion", "%q is not the apiVersion of %s: use %s", m.APIVersion, m.Kind, want)
}

func kindNames() []string {
	out := make([]string, 0, len(kinds))
	for k := range kinds {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// decodeInto decodes the object strictly, appends it to list and returns it.
func decodeInto[T any, PT interface {
	*T
	metav1.Object
}](list *[]PT, m *manifest.Object) (metav1.Object, error) {
	obj := PT(new(T))
	if err := m.Decode(obj); err != nil {
		return nil, err
	}
	*list = append(*list, obj)
	return obj, nil
}
