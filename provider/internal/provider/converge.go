package provider

import (
	"context"
	"encoding/json"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/stowage-dev/stowage/provider/internal/kube"
)

// converge makes the object's spec what the configuration says, defaults
// aside. Server-side apply removes only the fields this provider's manager
// owned: a taint another manager added (kubectl patch) would stay, and every
// plan would show it going while every apply reported success. When the
// applied object holds more than the configuration and the server's defaults,
// its spec is replaced whole, which removes such fields whoever owns them.
func (r *objectResource) converge(ctx context.Context, c *kube.Client, desired map[string]any, applied *unstructured.Unstructured) error {
	_, admission, err := r.kind.load()
	if err != nil {
		return err
	}
	want := runtime.DeepCopyJSON(desired)
	admission.Default(want)
	for attempt := 0; ; attempt++ {
		if jsonEqual(want["spec"], applied.Object["spec"]) {
			return nil
		}
		next := applied.DeepCopy()
		next.Object["spec"] = runtime.DeepCopyJSONValue(desired["spec"])
		_, err := r.kind.replace(ctx, c, next)
		if err == nil || !apierrors.IsConflict(err) || attempt == 2 {
			return err
		}
		if applied, err = r.kind.get(ctx, c, keyOf(applied.Object)); err != nil || applied == nil {
			return err
		}
	}
}

// jsonEqual reports whether two JSON values are the same, whatever the Go
// types of their numbers.
func jsonEqual(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	if errA != nil || errB != nil {
		return false
	}
	var x, y any
	if json.Unmarshal(ja, &x) != nil || json.Unmarshal(jb, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
