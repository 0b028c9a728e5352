package clusterautoscaler

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/yaml"
)

// WriteYAML writes the proposal as a multi-document stream of Stowage
// NodeClasses and NodePools, each after comments that say which node groups
// it replaces, how its instance types were widened and what was not carried
// over.
func (p *Proposal) WriteYAML(w io.Writer) error {
	var b strings.Builder
	var objs []any
	var names []string
	for _, nc := range p.NodeClasses {
		objs, names = append(objs, nc), append(names, nc.Name)
	}
	for _, np := range p.NodePools {
		objs, names = append(objs, np), append(names, np.Name)
	}
	for i, obj := range objs {
		body, err := cleanYAML(obj)
		if err != nil {
			return fmt.Errorf("writing %s: %w", names[i], err)
		}
		b.WriteString("---\n# Proposed by stowage import cluster-autoscaler.\n")
		for _, n := range p.Notes[names[i]] {
			b.WriteString("# " + n + "\n")
		}
		b.Write(body)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// cleanYAML renders an object without its empty status and creation time.
func cleanYAML(obj any) ([]byte, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	delete(m, "status")
	if meta, ok := m["metadata"].(map[string]any); ok {
		delete(meta, "creationTimestamp")
	}
	return yaml.Marshal(m)
}
