package simulate

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// mirror keeps a typed copy of every stored object, so that reads (the
// controllers' Gets and indexed Lists) cost a deep copy instead of the fake
// client's JSON round trip. Writes still go through the fake client, which
// owns resource versions, finalizers and patches; after each write the mirror
// takes the stored result.
type mirror struct {
	// item type -> namespace/name -> object
	objects map[reflect.Type]map[string]client.Object
	// item type -> field -> extractor, as the controllers indexed them
	indexes map[reflect.Type]map[string]client.IndexerFunc
	// item type -> field -> value -> namespace/name -> present
	buckets map[reflect.Type]map[string]map[string]map[string]bool
}

func newMirror() *mirror {
	return &mirror{objects: map[reflect.Type]map[string]client.Object{}, indexes: map[reflect.Type]map[string]client.IndexerFunc{},
		buckets: map[reflect.Type]map[string]map[string]map[string]bool{}}
}

func (m *mirror) index(obj client.Object, field string, fn client.IndexerFunc) {
	t := reflect.TypeOf(obj)
	if m.indexes[t] == nil {
		m.indexes[t] = map[string]client.IndexerFunc{}
	}
	m.indexes[t][field] = fn
}

func mirrorKey(obj client.Object) string { return obj.GetNamespace() + "/" + obj.GetName() }

// adopt stores obj itself, which no one may change from then on.
func (m *mirror) adopt(obj client.Object) {
	t := reflect.TypeOf(obj)
	if m.objects[t] == nil {
		m.objects[t] = map[string]client.Object{}
	}
	m.remove(obj)
	m.objects[t][mirrorKey(obj)] = obj
	m.reindex(t, obj, true)
}

func (m *mirror) remove(obj client.Object) {
	t := reflect.TypeOf(obj)
	if old, ok := m.objects[t][mirrorKey(obj)]; ok {
		m.reindex(t, old, false)
		delete(m.objects[t], mirrorKey(obj))
	}
}

// reindex files (or unfiles) an object under every indexed field's values.
func (m *mirror) reindex(t reflect.Type, obj client.Object, add bool) {
	for field, fn := range m.indexes[t] {
		for _, v := range fn(obj) {
			if m.buckets[t] == nil {
				m.buckets[t] = map[string]map[string]map[string]bool{}
			}
			if m.buckets[t][field] == nil {
				m.buckets[t][field] = map[string]map[string]bool{}
			}
			if m.buckets[t][field][v] == nil {
				m.buckets[t][field][v] = map[string]bool{}
			}
			if add {
				m.buckets[t][field][v][mirrorKey(obj)] = true
			} else {
				delete(m.buckets[t][field][v], mirrorKey(obj))
			}
		}
	}
}

// count is how many objects of obj's type are stored.
func (m *mirror) count(obj client.Object) int { return len(m.objects[reflect.TypeOf(obj)]) }

// peek returns the stored T under key, which the caller must not change.
func peek[T client.Object](m *mirror, key client.ObjectKey) (T, bool) {
	obj, ok := m.objects[reflect.TypeFor[T]()][key.Namespace+"/"+key.Name]
	if !ok {
		var none T
		return none, false
	}
	return obj.(T), true
}

// peekObject returns the stored object of obj's type and key, which the
// caller must not change.
func (m *mirror) peekObject(obj client.Object) (client.Object, bool) {
	stored, ok := m.objects[reflect.TypeOf(obj)][mirrorKey(obj)]
	return stored, ok
}

// get copies the stored object into obj.
func (m *mirror) get(key client.ObjectKey, obj client.Object) error {
	stored, ok := m.objects[reflect.TypeOf(obj)][key.Namespace+"/"+key.Name]
	if !ok {
		gvk := obj.GetObjectKind().GroupVersionKind()
		return apierrors.NewNotFound(schema.GroupResource{Group: gvk.Group, Resource: fmt.Sprintf("%T", obj)}, key.Name)
	}
	reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(stored.DeepCopyObject()).Elem())
	return nil
}

// list fills list with the stored items that match the options, sorted by
// namespace and name; with UnsafeDisableDeepCopy the items share their maps
// and slices with the stored objects, as with controller-runtime's cache.
func (m *mirror) list(list client.ObjectList, opts ...client.ListOption) error {
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	itemsPtr, err := meta.GetItemsPtr(list)
	if err != nil {
		return err
	}
	items := reflect.ValueOf(itemsPtr).Elem()
	itemType := reflect.PointerTo(items.Type().Elem())
	var matched []client.Object
	for _, obj := range m.scope(itemType, lo) {
		if ok, err := m.matches(itemType, obj, lo); err != nil {
			return err
		} else if ok {
			matched = append(matched, obj)
		}
	}
	slices.SortFunc(matched, func(a, b client.Object) int {
		return cmp.Or(cmp.Compare(a.GetNamespace(), b.GetNamespace()), cmp.Compare(a.GetName(), b.GetName()))
	})
	shared := lo.UnsafeDisableDeepCopy != nil && *lo.UnsafeDisableDeepCopy
	out := reflect.MakeSlice(items.Type(), len(matched), len(matched))
	for i, obj := range matched {
		if shared {
			out.Index(i).Set(reflect.ValueOf(obj).Elem())
		} else {
			out.Index(i).Set(reflect.ValueOf(obj.DeepCopyObject()).Elem())
		}
	}
	items.Set(out)
	return nil
}

// scope is every object of the type, or only those an indexed field
// requirement's bucket holds.
func (m *mirror) scope(t reflect.Type, lo *client.ListOptions) map[string]client.Object {
	if lo.FieldSelector == nil || lo.FieldSelector.Empty() {
		return m.objects[t]
	}
	req := lo.FieldSelector.Requirements()[0]
	if _, indexed := m.indexes[t][req.Field]; !indexed {
		return m.objects[t]
	}
	out := map[string]client.Object{}
	for key := range m.buckets[t][req.Field][req.Value] {
		out[key] = m.objects[t][key]
	}
	return out
}

func (m *mirror) matches(t reflect.Type, obj client.Object, lo *client.ListOptions) (bool, error) {
	if lo.Namespace != "" && obj.GetNamespace() != lo.Namespace {
		return false, nil
	}
	if lo.LabelSelector != nil && !lo.LabelSelector.Matches(labels.Set(obj.GetLabels())) {
		return false, nil
	}
	if lo.FieldSelector == nil || lo.FieldSelector.Empty() {
		return true, nil
	}
	for _, req := range lo.FieldSelector.Requirements() {
		fn, ok := m.indexes[t][req.Field]
		if !ok {
			return false, fmt.Errorf("listing %s by field %s: no index", t, req.Field)
		}
		if !slices.Contains(fn(obj), req.Value) {
			return false, nil
		}
	}
	return true, nil
}
