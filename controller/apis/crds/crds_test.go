package crds_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// TestCRDsOnAPIServer installs the CRDs on a real kube-apiserver and checks what
// admission accepts, rejects and defaults, and what kubectl prints. Every object is
// also run through the Go Validate (after SetDefaults), which must agree.
func TestCRDsOnAPIServer(t *testing.T) {
	s := startServer(t)
	t.Run("accepts the 2am-spike snapshot", func(t *testing.T) {
		s.checkManifests(t, "snapshot", "../../../examples/2am-spike/snapshot.yaml", nil)
	})
	t.Run("accepts Karpenter's v1 examples adapted to Stowage", func(t *testing.T) {
		files, err := filepath.Glob("testdata/karpenter-v1/*.yaml")
		if err != nil || len(files) == 0 {
			t.Fatalf("listing testdata/karpenter-v1: %v (%d files)", err, len(files))
		}
		for _, f := range files {
			s.checkManifests(t, strings.TrimSuffix(filepath.Base(f), ".yaml"), f, karpenterRejections)
		}
	})
	t.Run("accepts valid objects", func(t *testing.T) {
		for i, c := range validCases {
			t.Run(c.name, func(t *testing.T) { s.check(t, c, mustBuild(t, c, fmt.Sprintf("valid-%d", i))) })
		}
	})
	t.Run("rejects invalid objects, naming the field and the fix", func(t *testing.T) {
		for i, c := range invalidCases {
			t.Run(c.name, func(t *testing.T) { s.check(t, c, mustBuild(t, c, fmt.Sprintf("invalid-%d", i))) })
		}
	})
	t.Run("leaves some checks to Validate", func(t *testing.T) {
		for i, c := range validateOnlyCases {
			t.Run(c.name, func(t *testing.T) { s.checkValidateOnly(t, c, mustBuild(t, c, fmt.Sprintf("validate-only-%d", i))) })
		}
	})
	t.Run("defaults as SetDefaults does", s.testDefaults)
	t.Run("prints the columns", s.testPrinterColumns)
}

// check creates obj, which must be accepted or rejected as c says, and checks that
// the Go validation of obj agrees.
func (s *server) check(t *testing.T, c admissionCase, obj *unstructured.Unstructured) {
	t.Helper()
	_, err := s.resource(obj).Create(t.Context(), obj, metav1.CreateOptions{FieldValidation: "Strict"})
	if c.field == "" {
		if err != nil {
			t.Fatalf("%s %s rejected: %v", obj.GetKind(), obj.GetName(), err)
		}
	} else {
		checkRejection(t, err, c)
	}
	if c.admissionOnly {
		return
	}
	goErrs, err := goValidate(obj)
	switch {
	case errors.Is(err, errNoGoValidation):
	case c.field == "" && (err != nil || len(goErrs) > 0):
		t.Errorf("Validate rejects what admission accepts: %v%v", err, goErrs)
	case c.field != "" && err == nil && !namesField(goErrs, c.field):
		t.Errorf("Validate does not reject %s as admission does; it says %v", c.field, goErrs)
	}
}

// checkValidateOnly wants obj accepted by the API server and rejected by Validate
// naming c.field, or, when c.field is empty, by decoding.
func (s *server) checkValidateOnly(t *testing.T, c admissionCase, obj *unstructured.Unstructured) {
	t.Helper()
	if _, err := s.resource(obj).Create(t.Context(), obj, metav1.CreateOptions{FieldValidation: "Strict"}); err != nil {
		t.Fatalf("rejected at admission, which now checks this; move the case to invalidCases: %v", err)
	}
	goErrs, err := goValidate(obj)
	switch {
	case c.field == "" && err == nil:
		t.Errorf("decoding accepts it; Validate says %v", goErrs)
	case c.field != "" && (err != nil || !namesField(goErrs, c.field)):
		t.Errorf("Validate does not reject %s: %v%v", c.field, err, goErrs)
	}
}

// checkRejection wants err to be an Invalid error with a cause on c.field whose
// message contains c.msg.
func checkRejection(t *testing.T, err error, c admissionCase) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted; want a rejection of %s saying %q", c.field, c.msg)
	}
	if !apierrors.IsInvalid(err) {
		t.Fatalf("want an Invalid error, got %v", err)
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		t.Fatalf("the error has no details: %v", err)
	}
	for _, cause := range status.Status().Details.Causes {
		if cause.Field == c.field && strings.Contains(cause.Message, c.msg) {
			return
		}
	}
	t.Fatalf("no cause on %s saying %q in:\n%v", c.field, c.msg, err)
}

func namesField(errs field.ErrorList, path string) bool {
	for _, e := range errs {
		if strings.HasPrefix(e.Field, path) {
			return true
		}
	}
	return false
}

// errNoGoValidation is returned for kinds without a Validate method.
var errNoGoValidation = errors.New("no Go validation for this kind")

// goValidate decodes obj into its Go type, defaults it and validates it. A decode
// error (a malformed duration or quantity) is returned as such.
func goValidate(obj *unstructured.Unstructured) (field.ErrorList, error) {
	data, err := obj.MarshalJSON()
	if err != nil {
		return nil, err
	}
	switch obj.GetKind() {
	case "NodePool":
		var np v1alpha1.NodePool
		if err := json.Unmarshal(data, &np); err != nil {
			return nil, err
		}
		np.SetDefaults()
		return np.Validate(), nil
	case "NodeClass":
		var nc v1alpha1.NodeClass
		if err := json.Unmarshal(data, &nc); err != nil {
			return nil, err
		}
		nc.SetDefaults()
		return nc.Validate(), nil
	}
	return nil, errNoGoValidation
}

// mustBuild merges c.patch into c.base and names the object.
func mustBuild(t *testing.T, c admissionCase, name string) *unstructured.Unstructured {
	t.Helper()
	var base, patch map[string]any
	if err := yaml.Unmarshal([]byte(c.base), &base); err != nil {
		t.Fatalf("parsing the base of %s: %v", c, err)
	}
	if err := yaml.Unmarshal([]byte(c.patch), &patch); err != nil {
		t.Fatalf("parsing the patch of %s: %v", c, err)
	}
	obj := toUnstructured(t, mergePatch(base, patch))
	obj.SetName(name)
	return obj
}

// mergePatch applies patch to dst as a JSON merge patch (RFC 7386).
func mergePatch(dst, patch map[string]any) map[string]any {
	if dst == nil {
		dst = map[string]any{}
	}
	for k, v := range patch {
		pm, isMap := v.(map[string]any)
		switch dm, dstIsMap := dst[k].(map[string]any); {
		case v == nil:
			delete(dst, k)
		case isMap && dstIsMap:
			dst[k] = mergePatch(dm, pm)
		case isMap:
			dst[k] = mergePatch(nil, pm)
		default:
			dst[k] = v
		}
	}
	return dst
}

// toUnstructured round-trips m through JSON so that numbers become int64.
func toUnstructured(t *testing.T, m map[string]any) *unstructured.Unstructured {
	t.Helper()
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(data); err != nil {
		t.Fatalf("decoding %s: %v", data, err)
	}
	return obj
}

// checkManifests creates every Stowage object in the YAML file at path, renamed
// source-name so that files may reuse names. Objects listed in rejections (by
// "file/kind") must be rejected; all others accepted.
func (s *server) checkManifests(t *testing.T, source, path string, rejections map[string]admissionCase) {
	t.Helper()
	objs := readManifests(t, path)
	if len(objs) == 0 {
		t.Fatalf("%s holds no Stowage objects", path)
	}
	for _, obj := range objs {
		c := rejections[filepath.Base(path)+"/"+obj.GetKind()]
		c.name = fmt.Sprintf("%s %s/%s", filepath.Base(path), obj.GetKind(), obj.GetName())
		obj.SetName(source + "-" + obj.GetName())
		t.Run(c.name, func(t *testing.T) { s.check(t, c, obj) })
	}
}

// readManifests returns the stowage.dev objects of a multi-document YAML file.
func readManifests(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	decoder := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	var objs []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := decoder.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return objs
			}
			t.Fatalf("reading %s: %v", path, err)
		}
		if m == nil || !strings.HasPrefix(fmt.Sprint(m["apiVersion"]), v1alpha1.Group+"/") {
			continue
		}
		delete(m, "status")
		objs = append(objs, toUnstructured(t, m))
	}
}
