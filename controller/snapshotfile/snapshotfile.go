// Package snapshotfile reads a cluster snapshot from a multi-document YAML stream
// of Kubernetes objects (what `kubectl get ... -o yaml` prints) so that a user can
// ask what Stowage would decide on their cluster now.
package snapshotfile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
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

	// object -> where Read found it ("document 3", "document 1: items[2]"), for messages
	where map[any]string
	// "Kind namespace/name" -> where Read found it, to refuse duplicates
	seen map[string]string
}

type header struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Items      []json.RawMessage `json:"items"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

// Read parses every document, strictly: an unknown kind or field, a duplicate
// object or an invalid one is an error that names the document, the object and
// the field.
func Read(r io.Reader) (*Objects, error) {
	objs := &Objects{where: map[any]string{}, seen: map[string]string{}}
	docs := utilyaml.NewYAMLReader(bufio.NewReader(r))
	for i := 1; ; i++ {
		doc, err := docs.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading document %d: %w", i, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 || isComment(doc) {
			continue
		}
		if err := objs.add(doc, fmt.Sprintf("document %d", i)); err != nil {
			return nil, err
		}
	}
	return objs, objs.validate()
}

func isComment(doc []byte) bool {
	for _, line := range strings.Split(string(doc), "\n") {
		if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") {
			return false
		}
	}
	return true
}

// add decodes one document, or each item of a List; where names it in errors.
func (o *Objects) add(doc []byte, where string) error {
	var h header
	if err := yaml.Unmarshal(doc, &h); err != nil {
		return fmt.Errorf("%s: parsing YAML: %w", where, err)
	}
	if h.Kind == "List" || strings.HasSuffix(h.Kind, "List") && h.Items != nil {
		for j, item := range h.Items {
			if err := o.add(item, fmt.Sprintf("%s: items[%d]", where, j)); err != nil {
				return err
			}
		}
		return nil
	}
	decode, ok := decoders[h.Kind]
	if !ok {
		return fmt.Errorf("%s: kind %q is not part of a snapshot; use %s", where, h.Kind, strings.Join(kinds(), ", "))
	}
	id := h.Kind + " " + objectName(h.Metadata.Namespace, h.Metadata.Name)
	if first, dup := o.seen[id]; dup {
		return fmt.Errorf("%s: %s is already in %s; remove one of them", where, id, first)
	}
	obj, err := decode(o, doc)
	if err != nil {
		return fmt.Errorf("%s: %s: %w", where, id, err)
	}
	o.seen[id], o.where[obj] = where, where
	return nil
}

// at is where Read found obj, as a message prefix.
func (o *Objects) at(obj any) string {
	if w, ok := o.where[obj]; ok {
		return w + ": "
	}
	return ""
}

func objectName(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

func kinds() []string {
	out := make([]string, 0, len(decoders))
	for k := range decoders {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// decodeInto decodes doc strictly (unknown fields are errors), appends it to list
// and returns it.
func decodeInto[T any](list *[]*T, doc []byte) (any, error) {
	obj := new(T)
	if err := yaml.UnmarshalStrict(doc, obj); err != nil {
		return nil, err
	}
	*list = append(*list, obj)
	return obj, nil
}

var decoders = map[string]func(*Objects, []byte) (any, error){
	"Pod":                   func(o *Objects, d []byte) (any, error) { return decodeInto(&o.Pods, d) },
	"Node":                  func(o *Objects, d []byte) (any, error) { return decodeInto(&o.Nodes, d) },
	"DaemonSet":             func(o *Objects, d []byte) (any, error) { return decodeInto(&o.DaemonSets, d) },
	"PersistentVolumeClaim": func(o *Objects, d []byte) (any, error) { return decodeInto(&o.PersistentVolumeClaims, d) },
	"PersistentVolume":      func(o *Objects, d []byte) (any, error) { return decodeInto(&o.PersistentVolumes, d) },
	"StorageClass":          func(o *Objects, d []byte) (any, error) { return decodeInto(&o.StorageClasses, d) },
	"NodePool":              func(o *Objects, d []byte) (any, error) { return decodeInto(&o.NodePools, d) },
	"NodeClass":             func(o *Objects, d []byte) (any, error) { return decodeInto(&o.NodeClasses, d) },
	"NodeClaim":             func(o *Objects, d []byte) (any, error) { return decodeInto(&o.NodeClaims, d) },
}
