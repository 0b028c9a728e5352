package snapshotfile_test

import (
	"bytes"
	"os"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/stowage-dev/stowage/controller/manifest/manifesttest"
	"github.com/stowage-dev/stowage/controller/snapshotfile"
)

// FuzzRead checks Read on any input: it never panics; what it refuses is
// refused with errors placed on a line of the input, naming the field of the
// object; what it accepts reads back the same once written out, and writing
// that again gives the same bytes. `go test` runs the seeds below and those in
// testdata/fuzz/FuzzRead; `go test -fuzz FuzzRead` explores from them.
func FuzzRead(f *testing.F) {
	f.Add([]byte(docs(nodeClassWeb, nodePoolWeb, pod("api-0", ""), pod("api-1", "  nodeName: node-a\n"),
		"apiVersion: v1\nkind: Node\nmetadata: {name: node-a}\nstatus: {allocatable: {cpu: \"4\", memory: 16Gi}}\n")))
	f.Add([]byte("apiVersion: v1\nkind: List\nitems:\n  - apiVersion: v1\n    kind: Pod\n    metadata: {name: a}\n    spec: {containers: [{name: c}]}\n"))
	if example, err := os.ReadFile("../../examples/2am-spike/snapshot.yaml"); err == nil {
		f.Add(example)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		objs, err := snapshotfile.Read(bytes.NewReader(data))
		if err != nil {
			manifesttest.CheckErrors(t, data, err, snapshotfile.ErrEmpty)
			return
		}
		first := write(t, objs)
		again, err := snapshotfile.Read(bytes.NewReader(first))
		if err != nil {
			t.Fatalf("an accepted snapshot, written out, is refused: %v\n%s", err, first)
		}
		if ids(objs) != ids(again) {
			t.Fatalf("written out and read back, the objects are\n%s\nnot\n%s", ids(again), ids(objs))
		}
		if second := write(t, again); !bytes.Equal(first, second) {
			t.Fatalf("written out twice, the snapshot changes:\n%s\nthen\n%s", first, second)
		}
	})
}

// write prints the objects as a multi-document stream, kind by kind.
func write(t *testing.T, o *snapshotfile.Objects) []byte {
	t.Helper()
	var out bytes.Buffer
	add := func(obj any) {
		b, err := yaml.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		out.WriteString("---\n")
		out.Write(b)
	}
	for _, p := range o.Pods {
		add(p)
	}
	for _, n := range o.Nodes {
		add(n)
	}
	for _, d := range o.DaemonSets {
		add(d)
	}
	for _, c := range o.PersistentVolumeClaims {
		add(c)
	}
	for _, v := range o.PersistentVolumes {
		add(v)
	}
	for _, s := range o.StorageClasses {
		add(s)
	}
	for _, p := range o.NodePools {
		add(p)
	}
	for _, c := range o.NodeClasses {
		add(c)
	}
	for _, c := range o.NodeClaims {
		add(c)
	}
	return out.Bytes()
}

// ids lists the objects' kinds and names, in the order write prints them.
func ids(o *snapshotfile.Objects) string {
	var b bytes.Buffer
	for _, p := range o.Pods {
		b.WriteString("Pod " + p.Namespace + "/" + p.Name + "\n")
	}
	for _, n := range o.Nodes {
		b.WriteString("Node " + n.Name + "\n")
	}
	for _, d := range o.DaemonSets {
		b.WriteString("DaemonSet " + d.Namespace + "/" + d.Name + "\n")
	}
	for _, c := range o.PersistentVolumeClaims {
		b.WriteString("PersistentVolumeClaim " + c.Namespace + "/" + c.Name + "\n")
	}
	for _, v := range o.PersistentVolumes {
		b.WriteString("PersistentVolume " + v.Name + "\n")
	}
	for _, s := range o.StorageClasses {
		b.WriteString("StorageClass " + s.Name + "\n")
	}
	for _, p := range o.NodePools {
		b.WriteString("NodePool " + p.Name + "\n")
	}
	for _, c := range o.NodeClasses {
		b.WriteString("NodeClass " + c.Name + "\n")
	}
	for _, c := range o.NodeClaims {
		b.WriteString("NodeClaim " + c.Name + "\n")
	}
	return b.String()
}
