package karpenter_test

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/aws/amifamily"
	"github.com/stowage-dev/stowage/internal/userdatacheck"
)

// TestEveryConvertedNodeClassBootsANode renders the user data of every
// NodeClass the converter converts, as a launch would, and reads it back as
// a node of its family does: every NodeConfig passes nodeadm's schema, every
// Bottlerocket document is TOML (each table declared once) holding each of
// the user's values that Stowage does not replace, and a custom family's
// user data is the user's, as written.
func TestEveryConvertedNodeClassBootsANode(t *testing.T) {
	cluster := amifamily.Cluster{Name: "prod", Endpoint: "https://api.example.com", CABundle: "Q0E=", CIDR: "10.100.0.0/16"}
	rendered := 0
	for _, file := range testdataFiles(t) {
		r, _ := importFile(t, file)
		for _, o := range r.Objects {
			nc := o.NodeClass
			if nc == nil {
				continue
			}
			family := amifamily.Family(nc)
			b := amifamily.Bootstrap{Cluster: cluster, Kubelet: nc.Spec.Kubelet, CustomData: nc.Spec.UserData,
				Labels: map[string]string{v1alpha1.LabelNodePool: "default", "team": "web"},
				Taints: []corev1.Taint{v1alpha1.UnregisteredNoExecuteTaint}}
			out, err := amifamily.Render(family, b)
			if err != nil {
				t.Errorf("%s: NodeClass %s: %v", file, nc.Name, err)
				continue
			}
			rendered++
			if err := nodeReads(family, out, nc.Spec.UserData); err != nil {
				t.Errorf("%s: NodeClass %s (%s): %v\n%s", file, nc.Name, family, err, out.Text)
			}
		}
	}
	if rendered < 10 {
		t.Errorf("only %d NodeClasses rendered", rendered)
	}
}

func nodeReads(family string, out amifamily.Rendered, custom *string) error {
	switch family {
	case amifamily.FamilyCustom:
		if custom != nil && out.Text != *custom {
			return fmt.Errorf("a custom family's user data is not the NodeClass's")
		}
		return nil
	case amifamily.FamilyBottlerocket:
		if _, err := userdatacheck.Check(family, base64.StdEncoding.EncodeToString([]byte(out.Text))); err != nil {
			return err
		}
		return userValuesKept(custom, out)
	}
	_, err := userdatacheck.Check(family, base64.StdEncoding.EncodeToString([]byte(out.Text)))
	return err
}

// userValuesKept checks that each setting of the user's TOML is in the
// rendered document, unless Stowage names it replaced.
func userValuesKept(custom *string, out amifamily.Rendered) error {
	if custom == nil {
		return nil
	}
	var user, got map[string]any
	if _, err := toml.Decode(*custom, &user); err != nil {
		return err
	}
	if _, err := toml.Decode(out.Text, &got); err != nil {
		return err
	}
	rendered := flatten(got)
	for path, v := range flatten(user) {
		setting, _, _ := strings.Cut(path, "[")
		if rendered[path] != v && !slices.Contains(out.Replaced, setting) {
			return fmt.Errorf("the user's %s = %s is %q in the rendered document", path, v, rendered[path])
		}
	}
	return nil
}

// flatten maps each leaf's dotted path (lists indexed) to its value.
func flatten(doc map[string]any) map[string]string {
	out := map[string]string{}
	leaves(doc, "", func(path, value string) { out[strings.TrimPrefix(path, ".")] = value })
	return out
}
