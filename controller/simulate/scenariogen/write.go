package scenariogen

import (
	"bytes"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/simulate"
)

// scenarioDocument is the Scenario document as a file holds it.
type scenarioDocument struct {
	APIVersion string                `json:"apiVersion"`
	Kind       string                `json:"kind"`
	Metadata   metav1.ObjectMeta     `json:"metadata"`
	Spec       simulate.ScenarioSpec `json:"spec"`
}

// Marshal writes a scenario as the multi-document YAML file `stowage
// simulate --scenario` reads, headed by comment lines (one per element of
// header); fields left at their zero values are left out.
func Marshal(s *simulate.Scenario, header ...string) ([]byte, error) {
	var buf bytes.Buffer
	for _, line := range header {
		fmt.Fprintf(&buf, "# %s\n", line)
	}
	docs := []any{scenarioDocument{APIVersion: simulate.ScenarioAPIVersion, Kind: simulate.ScenarioKind,
		Metadata: metav1.ObjectMeta{Name: s.Name}, Spec: s.Spec}}
	stowage := metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String()}
	for _, nc := range s.NodeClasses {
		nc = nc.DeepCopy()
		nc.TypeMeta, nc.TypeMeta.Kind = stowage, "NodeClass"
		docs = append(docs, nc)
	}
	for _, np := range s.NodePools {
		np = np.DeepCopy()
		np.TypeMeta, np.TypeMeta.Kind = stowage, "NodePool"
		docs = append(docs, np)
	}
	for _, ds := range s.DaemonSets {
		ds = ds.DeepCopy()
		ds.TypeMeta = metav1.TypeMeta{APIVersion: appsv1.SchemeGroupVersion.String(), Kind: "DaemonSet"}
		docs = append(docs, ds)
	}
	for _, d := range s.Deployments {
		d = d.DeepCopy()
		d.TypeMeta = metav1.TypeMeta{APIVersion: appsv1.SchemeGroupVersion.String(), Kind: "Deployment"}
		docs = append(docs, d)
	}
	for _, j := range s.Jobs {
		j = j.DeepCopy()
		j.TypeMeta = metav1.TypeMeta{APIVersion: batchv1.SchemeGroupVersion.String(), Kind: "Job"}
		docs = append(docs, j)
	}
	for i, doc := range docs {
		out, err := document(doc)
		if err != nil {
			return nil, fmt.Errorf("writing document %d of scenario %s: %w", i+1, s.Name, err)
		}
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(out)
	}
	return buf.Bytes(), nil
}

// document renders one object as YAML without its empty fields: nulls, empty
// maps and lists, zero durations and the status.
func document(obj any) ([]byte, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var tree map[string]any
	if err := json.Unmarshal(raw, &tree); err != nil {
		return nil, err
	}
	delete(tree, "status")
	return yaml.Marshal(prune(tree))
}

// prune drops the empty values of a decoded JSON tree.
func prune(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, child := range x {
			if child = prune(child); empty(child) {
				delete(x, k)
			} else {
				x[k] = child
			}
		}
	case []any:
		for i := range x {
			x[i] = prune(x[i])
		}
	}
	return v
}

func empty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	case string:
		return x == "0s"
	}
	return false
}
