package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const bufferExample = "../../../examples/capacity-buffer/snapshot.yaml"

// A CapacityBuffer of three replicas with no pending pod plans a node for
// each: the room the provisioner keeps, as stowage run would launch it.
func TestScheduleCapacityBufferPlansItsReplicas(t *testing.T) {
	d, _ := scheduleJSON(t, "--snapshot", bufferExample)
	if len(d.NodeClaims) != 3 {
		t.Fatalf("%d new nodeclaims, want 3 (one g5/g6.12xlarge per 4-GPU replica): %+v", len(d.NodeClaims), d.NodeClaims)
	}
	for i, nc := range d.NodeClaims {
		if len(nc.Pods) != 1 || !strings.HasPrefix(nc.Pods[0], "inference/capacitybuffer-vllm-headroom-") {
			t.Errorf("nodeclaim %d holds %v, want one of the buffer's virtual pods", i, nc.Pods)
		}
	}
	if len(d.Buffers) != 1 {
		t.Fatalf("buffers %+v, want the one of the snapshot", d.Buffers)
	}
	b := d.Buffers[0]
	if b.Buffer != "inference/vllm-headroom" || !b.Ready || b.Wanted != 3 || b.Replicas != 3 || b.OnNewNodes != 3 || b.Unschedulable != 0 {
		t.Errorf("buffer %+v, want inference/vllm-headroom ready with 3 of 3 replicas on new nodes", b)
	}
}

// The same snapshot without the buffer plans nothing, and a buffer written as
// v1alpha1 (served by the CRD with the same schema) reads as v1beta1.
func TestScheduleCapacityBufferVersionsAndAbsence(t *testing.T) {
	data, err := os.ReadFile(bufferExample)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	cut := strings.Index(text, "apiVersion: autoscaling.x-k8s.io/v1beta1")
	if cut < 0 {
		t.Fatal("the example has no v1beta1 CapacityBuffer")
	}
	dir := t.TempDir()
	without, alpha := filepath.Join(dir, "without.yaml"), filepath.Join(dir, "alpha.yaml")
	if err := os.WriteFile(without, []byte(strings.TrimSuffix(text[:cut], "---\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(alpha, []byte(strings.Replace(text, "autoscaling.x-k8s.io/v1beta1", "autoscaling.x-k8s.io/v1alpha1", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if d, _ := scheduleJSON(t, "--snapshot", without); len(d.NodeClaims) != 0 || len(d.Buffers) != 0 {
		t.Errorf("without the buffer: %d nodeclaims, buffers %+v; want none", len(d.NodeClaims), d.Buffers)
	}
	if d, _ := scheduleJSON(t, "--snapshot", alpha); len(d.NodeClaims) != 3 {
		t.Errorf("a v1alpha1 buffer: %d nodeclaims, want 3", len(d.NodeClaims))
	}
}

// A buffer naming a PodTemplate the snapshot lacks plans nothing and says why;
// a buffer of an unknown apiVersion is refused on its line.
func TestScheduleCapacityBufferErrors(t *testing.T) {
	data, err := os.ReadFile(bufferExample)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	missing, badVersion := filepath.Join(dir, "missing.yaml"), filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(missing, []byte(strings.Replace(string(data), "podTemplateRef: {name: vllm-replica}", "podTemplateRef: {name: gone}", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(badVersion, []byte(strings.Replace(string(data), "autoscaling.x-k8s.io/v1beta1", "autoscaling.x-k8s.io/v2", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	d, _ := scheduleJSON(t, "--snapshot", missing)
	if len(d.NodeClaims) != 0 || len(d.Buffers) != 1 || d.Buffers[0].Ready || d.Buffers[0].Reason != "PodTemplateNotFound" {
		t.Errorf("a buffer of a missing PodTemplate: %d nodeclaims, buffers %+v; want none planned and PodTemplateNotFound", len(d.NodeClaims), d.Buffers)
	}
	code, _, stderr := stowage(t, "schedule", "--snapshot", badVersion)
	if code != 1 || !strings.Contains(stderr, "CapacityBuffer inference/vllm-headroom") || !strings.Contains(stderr, "autoscaling.x-k8s.io/v1beta1") {
		t.Errorf("exit %d, stderr %q; want exit 1 naming the buffer and the apiVersion to use", code, stderr)
	}
}
