package chartgen_test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	kubefake "helm.sh/helm/v4/pkg/kube/fake"
	release "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/stowage-dev/stowage/controller/apis/crds"
	"github.com/stowage-dev/stowage/controller/deploy"
	"github.com/stowage-dev/stowage/internal/chartgen"
)

var chartDir = filepath.Join("..", "..", chartgen.Dir)

func TestTheChartIsWhatChartgenWrites(t *testing.T) {
	files, err := chartgen.Files()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(chartDir, name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is stale (%v): run make generate and commit", name, err)
		}
	}
}

func load(t *testing.T) *chart.Chart {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// render renders the chart as `helm template` does, client side, as
// release stowage in namespace stowage, and decodes every object strictly.
func render(t *testing.T, values map[string]any) []client.Object {
	t.Helper()
	cfg := action.NewConfiguration()
	cfg.Releases = storage.Init(driver.NewMemory())
	cfg.KubeClient = &kubefake.PrintingKubeClient{Out: io.Discard}
	install := action.NewInstall(cfg)
	install.DryRunStrategy = action.DryRunClient
	install.ReleaseName, install.Namespace = "stowage", deploy.Namespace
	kv, err := common.ParseKubeVersion("v1.37.2") // the bed's
	if err != nil {
		t.Fatal(err)
	}
	install.KubeVersion = kv
	r, err := install.Run(load(t), values)
	if err != nil {
		t.Fatalf("rendering the chart: %v", err)
	}
	rel, ok := r.(*release.Release)
	if !ok {
		t.Fatalf("the install returned a %T", r)
	}
	objs, err := deploy.Decode([]byte(rel.Manifest))
	if err != nil {
		t.Fatalf("the rendered chart does not decode strictly: %v\n%s", err, rel.Manifest)
	}
	return objs
}

// manifestSettings are the values that say what the manifests say: their
// placeholders for the cluster, their role-arn placeholder, their namespace.
func manifestSettings(t *testing.T) map[string]any {
	t.Helper()
	ms, err := deploy.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	var roleARN string
	for _, m := range ms {
		switch o := m.Object.(type) {
		case *appsv1.Deployment:
			for _, e := range o.Spec.Template.Spec.Containers[0].Env {
				env[e.Name] = e.Value
			}
		case *corev1.ServiceAccount:
			roleARN = o.Annotations["eks.amazonaws.com/role-arn"]
		}
	}
	return map[string]any{"clusterName": env["CLUSTER_NAME"], "clusterEndpoint": env["CLUSTER_ENDPOINT"], "region": env["AWS_REGION"],
		"clusterCABundle": env["CLUSTER_CA_BUNDLE"], "namespace": map[string]any{"create": true},
		"serviceAccount": map[string]any{"roleArn": roleARN}}
}

// TestTheChartIsTheProvidersManifests: rendered with the values that
// say what the manifests say, the chart is controller/deploy's objects (the
// ones stowage_controller applies), field for field, and its crds/ are the
// CRDs.
func TestTheChartIsTheProvidersManifests(t *testing.T) {
	got := byKey(t, render(t, manifestSettings(t)))
	checkSharedCRDs(t, got)
	ms, err := deploy.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	var objs []client.Object
	for _, m := range ms {
		objs = append(objs, m.Object)
	}
	want := byKey(t, objs)
	if !slices.Equal(slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want))) {
		t.Fatalf("the chart renders %v, the manifests hold %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}
	for k, w := range want {
		if !reflect.DeepEqual(got[k], w) {
			g, _ := yaml.Marshal(got[k])
			wy, _ := yaml.Marshal(w)
			t.Errorf("%s differs from the manifests'\n--- chart\n%s--- manifests\n%s", k, g, wy)
		}
	}
	defs, err := crds.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]map[string]any{}
	for _, d := range defs {
		w, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(d)
		w["apiVersion"], w["kind"] = "apiextensions.k8s.io/v1", "CustomResourceDefinition"
		byName[d.Name] = normal(t, w)
	}
	crdObjs := load(t).CRDObjects()
	if len(crdObjs) != len(byName) {
		t.Fatalf("crds/ holds %d CRDs, controller/apis/crds %d", len(crdObjs), len(byName))
	}
	for _, c := range crdObjs {
		var u map[string]any
		if err := yaml.UnmarshalStrict(c.File.Data, &u); err != nil {
			t.Fatalf("%s: %v", c.Filename, err)
		}
		name, _ := u["metadata"].(map[string]any)["name"].(string)
		if w, ok := byName[name]; !ok || !reflect.DeepEqual(normal(t, u), w) {
			t.Errorf("%s is not controller/apis/crds' %s", c.Filename, name)
		}
	}
}

// byKey maps kind/namespace/name to each object's JSON form.
func byKey(t *testing.T, objs []client.Object) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, o := range objs {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{Object: m}
		out[fmt.Sprintf("%T %s/%s", o, u.GetNamespace(), u.GetName())] = normal(t, m)
	}
	return out
}

// normal is a map through JSON, so that numbers compare alike.
func normal(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	b, err := yaml.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := yaml.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestEveryValueLandsWhereItSays renders the chart with every value set away
// from its default and finds each in the objects.
func TestEveryValueLandsWhereItSays(t *testing.T) {
	digest := "sha256:" + strings.Repeat("ab", 32)
	values := map[string]any{
		"clusterName": "prod", "clusterEndpoint": "https://prod.example.com", "region": "eu-west-1", "clusterCABundle": "Q0E=",
		"clusterCIDR": "10.100.0.0/16", "logLevel": "debug", "logFormat": "text", "preferencePolicy": "respect",
		"extraArgs": []any{"--batch-idle-duration=2s"}, "replicas": 3, "priorityClassName": "",
		"image":          map[string]any{"repository": "registry.example.com/stowage", "tag": "v1.2.3", "digest": digest, "pullPolicy": "IfNotPresent"},
		"serviceAccount": map[string]any{"name": "karpenter", "roleArn": "arn:aws:iam::123456789012:role/ctl", "annotations": map[string]any{"team": "platform"}},
		"resources":      map[string]any{"requests": map[string]any{"cpu": "1"}},
		"nodeSelector":   map[string]any{"role": "system"},
		"tolerations":    []any{map[string]any{"key": "CriticalAddonsOnly", "operator": "Exists"}},
		"affinity":       nil, "topologySpreadConstraints": nil,
		"podDisruptionBudget": map[string]any{"enabled": false},
	}
	objs := render(t, values)
	var d *appsv1.Deployment
	var sa *corev1.ServiceAccount
	for _, o := range objs {
		switch o := o.(type) {
		case *appsv1.Deployment:
			d = o
		case *corev1.ServiceAccount:
			sa = o
		}
		if strings.HasSuffix(fmt.Sprintf("%T", o), "PodDisruptionBudget") {
			t.Error("podDisruptionBudget.enabled=false still renders the PDB")
		}
	}
	pod := d.Spec.Template.Spec
	c := pod.Containers[0]
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	checks := map[string]bool{
		"image":             c.Image == "registry.example.com/stowage:v1.2.3@"+digest && c.ImagePullPolicy == corev1.PullIfNotPresent,
		"replicas":          *d.Spec.Replicas == 3,
		"args":              slices.Equal(c.Args, []string{"run", "--batch-idle-duration=2s"}),
		"env":               env["CLUSTER_NAME"] == "prod" && env["CLUSTER_ENDPOINT"] == "https://prod.example.com" && env["AWS_REGION"] == "eu-west-1" && env["CLUSTER_CA_BUNDLE"] == "Q0E=" && env["CLUSTER_CIDR"] == "10.100.0.0/16" && env["PREFERENCE_POLICY"] == "respect" && env["LOG_LEVEL"] == "debug" && env["LOG_FORMAT"] == "text",
		"service account":   pod.ServiceAccountName == "karpenter" && sa.Name == "karpenter" && sa.Annotations["eks.amazonaws.com/role-arn"] == "arn:aws:iam::123456789012:role/ctl" && sa.Annotations["team"] == "platform",
		"resources":         c.Resources.Requests.Cpu().String() == "1" && c.Resources.Limits.Memory().String() == "1Gi", // maps merge with the defaults
		"scheduling":        pod.NodeSelector["role"] == "system" && len(pod.Tolerations) == 1 && pod.Affinity == nil && pod.TopologySpreadConstraints == nil && pod.PriorityClassName == "",
		"bindings' subject": bindsTo(objs, "karpenter", deploy.Namespace),
	}
	for what, ok := range checks {
		if !ok {
			t.Errorf("%s: not what the values say", what)
		}
	}
}

func bindsTo(objs []client.Object, sa, ns string) bool {
	n := 0
	for _, o := range objs {
		m, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		subjects, _, _ := unstructured.NestedSlice(m, "subjects")
		for _, s := range subjects {
			if s, _ := s.(map[string]any); s["name"] == sa && s["namespace"] == ns {
				n++
			}
		}
	}
	return n == 2
}

func TestLintPassesAndAMissingValueIsNamed(t *testing.T) {
	lint := action.NewLint()
	lint.Namespace = deploy.Namespace
	res := lint.Run([]string{chartDir}, manifestSettings(t))
	for _, m := range res.Messages {
		if m.Severity > support.InfoSev {
			t.Errorf("helm lint: %s", m)
		}
	}
	if len(res.Errors) > 0 {
		t.Fatalf("helm lint: %v", res.Errors)
	}
	// helm lint only logs a missing required value; an install refuses it.
	install := action.NewInstall(action.NewConfiguration())
	install.DryRunStrategy, install.ReleaseName, install.Namespace = action.DryRunClient, "stowage", deploy.Namespace
	install.KubeVersion = &common.KubeVersion{Version: "v1.37.2", Major: "1", Minor: "37"}
	_, err := install.Run(load(t), map[string]any{"region": "us-east-1", "clusterEndpoint": "https://x.example.com"})
	if err == nil || !strings.Contains(err.Error(), "clusterName is required") {
		t.Fatalf("rendering without clusterName: %v, want an error naming it", err)
	}
}

// TestThePackageIsReproducible packages the chart twice, at the epoch make
// release gives it, into the same bytes.
func TestThePackageIsReproducible(t *testing.T) {
	epoch := time.Unix(1700000000, 0)
	var sums []string
	for range 2 {
		p := action.NewPackage()
		p.Version, p.AppVersion, p.Destination, p.SourceDateEpoch = "1.2.3", "v1.2.3", t.TempDir(), &epoch
		path, err := p.Run(chartDir, nil)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Base(path) != "stowage-1.2.3.tgz" {
			t.Errorf("the package is %s", filepath.Base(path))
		}
		sums = append(sums, fmt.Sprintf("%x", sha256.Sum256(data)))
	}
	if sums[0] != sums[1] {
		t.Fatalf("two packages of the same chart differ: %v", sums)
	}
}

// checkSharedCRDs takes the shared CRDs out of the rendered objects and
// holds each against Cluster Autoscaler's file, kept on uninstall: rendered
// where the cluster has none, as in a client-side dry run.
func checkSharedCRDs(t *testing.T, got map[string]map[string]any) {
	t.Helper()
	for _, shared := range chartgen.SharedCRDs() {
		key := "*v1.CustomResourceDefinition /" + shared.Name
		rendered, ok := got[key]
		if !ok {
			t.Fatalf("the chart does not render the %s CRD on a cluster without it: %v", shared.Kind, slices.Sorted(maps.Keys(got)))
		}
		delete(got, key)
		delete(rendered, "status") // the typed decoding's empty status
		var want map[string]any
		if err := yaml.UnmarshalStrict(shared.Raw, &want); err != nil {
			t.Fatal(err)
		}
		meta := want["metadata"].(map[string]any)
		if meta["annotations"] == nil {
			meta["annotations"] = map[string]any{}
		}
		meta["annotations"].(map[string]any)[chartgen.ResourcePolicy] = "keep"
		if !reflect.DeepEqual(rendered, normal(t, want)) {
			t.Errorf("the rendered %s CRD is not Cluster Autoscaler's with helm's keep policy", shared.Kind)
		}
	}
}
