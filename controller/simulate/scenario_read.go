package simulate

import (
	"errors"
	"fmt"
	"io"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	autoscalingv1beta1 "github.com/stowage-dev/stowage/controller/apis/autoscaling/v1beta1"
	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/karpenter"
	"github.com/stowage-dev/stowage/controller/manifest"
)

// ErrNoScenario is ReadScenario's error for a file without a Scenario document.
var ErrNoScenario = fmt.Errorf("no %s document (apiVersion %s): add one with spec.duration and spec.workloads", ScenarioKind, ScenarioAPIVersion)

// ReadScenario parses a scenario file strictly: an unknown kind or field, an
// apiVersion that is not the kind's, a duplicate object, a negative request
// or an invalid value is an error naming its line, the object and the field.
// Workloads without a namespace are in "default". Karpenter's NodePools and
// EC2NodeClasses are converted to Stowage's (Warnings lists what was left out).
func ReadScenario(r io.Reader) (*Scenario, error) {
	s := &Scenario{where: map[any]*manifest.Object{}}
	objs, err := manifest.Read(r)
	if err != nil {
		return nil, err
	}
	seen := map[string]int{}
	var errs []error
	for _, m := range objs {
		if err := s.add(m, seen); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if s.doc == nil {
		return nil, ErrNoScenario
	}
	if err := s.validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// scenarioKinds are the kinds of a scenario file: apiVersion, and whether the
// kind is namespaced.
var scenarioKinds = map[string]struct {
	apiVersion string
	namespaced bool
}{
	ScenarioKind: {ScenarioAPIVersion, false},
	"NodePool":   {v1alpha1.SchemeGroupVersion.String(), false},
	"NodeClass":  {v1alpha1.SchemeGroupVersion.String(), false},
	"Deployment": {"apps/v1", true},
	"Job":        {"batch/v1", true},
	"DaemonSet":  {"apps/v1", true},
	// CapacityBuffers and the PodTemplates they name (buffers.go).
	"CapacityBuffer": {autoscalingv1beta1.SchemeGroupVersion.String(), true},
	"PodTemplate":    {"v1", true},
}

// add checks one object's kind, apiVersion, name and namespace, and decodes it.
func (s *Scenario) add(m *manifest.Object, seen map[string]int) error {
	if karpenter.Is(m.APIVersion, m.Kind) && m.Kind != "NodeClaim" {
		return s.addKarpenter(m, seen)
	}
	k, ok := scenarioKinds[m.Kind]
	switch {
	case !ok:
		return m.Errorf("kind", "kind %q is not part of a scenario; use Scenario, NodePool, NodeClass, Deployment, Job, DaemonSet, CapacityBuffer or PodTemplate (or Karpenter's NodePool and EC2NodeClass)", m.Kind)
	case m.APIVersion != k.apiVersion && !(m.Kind == "CapacityBuffer" && slices.Contains(autoscalingv1beta1.ServedVersions, m.APIVersion)):
		return m.Errorf("apiVersion", "%q is not the apiVersion of %s: use %s", m.APIVersion, m.Kind, k.apiVersion)
	case m.Kind == ScenarioKind && s.doc != nil:
		return m.Errorf("kind", "a file holds one Scenario document; the first is on line %d", s.doc.Line())
	case m.Name == "" && m.Kind != ScenarioKind:
		return m.Errorf("metadata.name", "Required value: name the object")
	case k.namespaced && m.Namespace == "":
		m.Namespace = metav1.NamespaceDefault
	case !k.namespaced && m.Namespace != "":
		return m.Errorf("metadata.namespace", "%s is cluster-scoped; remove the namespace", m.Kind)
	}
	if first, dup := seen[m.ID()]; dup {
		return m.Errorf("metadata.name", "%s is already on line %d; remove one of them", m.ID(), first)
	}
	seen[m.ID()] = m.Line()
	return s.decode(m)
}

// addKarpenter converts a Karpenter NodePool or EC2NodeClass to Stowage's,
// keeping the warnings.
func (s *Scenario) addKarpenter(m *manifest.Object, seen map[string]int) error {
	c, err := karpenter.Convert(m)
	if err != nil {
		return err
	}
	id := karpenter.Kinds[m.Kind].Stowage + " " + m.Name
	if first, dup := seen[id]; dup {
		return m.Errorf("metadata.name", "%s is already on line %d (once converted, %s %s is a %s); remove one of them", id, first, m.APIVersion, m.Kind, id)
	}
	seen[id] = m.Line()
	if c.NodePool != nil {
		s.NodePools, s.where[c.NodePool] = append(s.NodePools, c.NodePool), m
	} else {
		s.NodeClasses, s.where[c.NodeClass] = append(s.NodeClasses, c.NodeClass), m
	}
	s.Warnings = append(s.Warnings, c.Warnings()...)
	return nil
}

// decode decodes one object by its kind.
func (s *Scenario) decode(m *manifest.Object) error {
	var obj metav1.Object
	var err error
	switch m.Kind {
	case ScenarioKind:
		var d scenarioDocument
		if err := m.Decode(&d); err != nil {
			return err
		}
		s.Name, s.Spec, s.doc = d.Name, d.Spec, m
		return nil
	case "NodePool":
		obj, err = decodeAppend(m, &s.NodePools)
	case "NodeClass":
		obj, err = decodeAppend(m, &s.NodeClasses)
	case "Deployment":
		obj, err = decodeAppend(m, &s.Deployments)
	case "Job":
		obj, err = decodeAppend(m, &s.Jobs)
	case "DaemonSet":
		obj, err = decodeAppend(m, &s.DaemonSets)
	case "CapacityBuffer":
		obj, err = decodeAppend(m, &s.CapacityBuffers)
	case "PodTemplate":
		obj, err = decodeAppend(m, &s.PodTemplates)
	}
	if err != nil {
		return err
	}
	obj.SetNamespace(m.Namespace)
	s.where[obj] = m
	return nil
}

func decodeAppend[T any, PT interface {
	*T
	metav1.Object
}](m *manifest.Object, list *[]PT) (metav1.Object, error) {
	obj := PT(new(T))
	if err := m.Decode(obj); err != nil {
		return nil, err
	}
	*list = append(*list, obj)
	return obj, nil
}
