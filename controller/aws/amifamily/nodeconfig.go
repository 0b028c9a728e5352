package amifamily

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// Media types of the parts of an AL2023 node's MIME user data.
const (
	contentTypeNodeConfig  = "application/node.eks.aws"
	contentTypeShellScript = `text/x-shellscript; charset="us-ascii"`
)

// nodeConfig is nodeadm's NodeConfig (node.eks.aws/v1alpha1), the part of
// its published schema Stowage writes, under the schema's field names.
type nodeConfig struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Spec       nodeConfigSpec `json:"spec"`
}

type nodeConfigSpec struct {
	Cluster  clusterDetails   `json:"cluster"`
	Instance *instanceOptions `json:"instance,omitempty"`
	Kubelet  kubeletOptions   `json:"kubelet"`
}

type clusterDetails struct {
	Name              string `json:"name"`
	APIServerEndpoint string `json:"apiServerEndpoint"`
	// CertificateAuthority is base64 (the schema's format: byte).
	CertificateAuthority string `json:"certificateAuthority"`
	CIDR                 string `json:"cidr"`
}

type instanceOptions struct {
	LocalStorage localStorageOptions `json:"localStorage"`
}

type localStorageOptions struct {
	Strategy string `json:"strategy"`
}

type kubeletOptions struct {
	// Config is merged by nodeadm into the kubelet's configuration (its
	// drop-in), so it carries the kubelet's field names.
	Config *kubeletSettings `json:"config,omitempty"`
	// Flags are appended to the kubelet's command line.
	Flags []string `json:"flags,omitempty"`
}

// al2023 is a MIME multi-part message: the NodeClass's own parts first, in
// their order, then Stowage's NodeConfig. nodeadm merges NodeConfig
// documents in order, a later one's values over an earlier one's (and
// kubelet flags appended, the last --node-labels value of a key winning), so
// the cluster, the labels, the taints and the kubelet block are Stowage's,
// and everything else the NodeClass's NodeConfig sets is kept.
func al2023(b Bootstrap) (Rendered, error) {
	user, err := customParts(b.custom())
	if err != nil {
		return Rendered{}, err
	}
	ours := b.nodeConfig()
	doc, err := yaml.Marshal(ours)
	if err != nil {
		return Rendered{}, fmt.Errorf("encoding the NodeConfig: %w", err)
	}
	replaced, err := replacedInNodeConfigs(user, ours, b.Labels)
	if err != nil {
		return Rendered{}, err
	}
	parts := append(slices.Clip(user), part{contentTypeNodeConfig, string(doc)})
	return Rendered{Text: writeMIME(parts), Replaced: replaced}, nil
}

func (b Bootstrap) nodeConfig() nodeConfig {
	c := nodeConfig{APIVersion: "node.eks.aws/v1alpha1", Kind: "NodeConfig", Spec: nodeConfigSpec{
		Cluster: clusterDetails{Name: b.Cluster.Name, APIServerEndpoint: b.Cluster.Endpoint,
			CertificateAuthority: b.Cluster.CABundle, CIDR: b.Cluster.CIDR},
	}}
	if b.InstanceStoreRAID0 {
		c.Spec.Instance = &instanceOptions{LocalStorage: localStorageOptions{Strategy: "RAID0"}}
	}
	k := kubeletOf(b.Kubelet)
	k.RegisterWithTaints = b.Taints
	c.Spec.Kubelet.Config = &k
	if len(b.Labels) > 0 {
		c.Spec.Kubelet.Flags = []string{"--node-labels=" + joinLabels(b.Labels)}
	}
	return c
}

func joinLabels(labels map[string]string) string {
	parts := make([]string, 0, len(labels))
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		parts = append(parts, k+"="+labels[k])
	}
	return strings.Join(parts, ",")
}

// replacedInNodeConfigs names the settings of the user's NodeConfig
// documents (merged in order) that Stowage's NodeConfig, merged after
// them, replaces with another value.
func replacedInNodeConfigs(user []part, ours nodeConfig, labels map[string]string) ([]string, error) {
	merged := map[string]any{}
	var flags []string
	for i, p := range user {
		if !isNodeConfig(p.contentType) {
			continue
		}
		var doc map[string]any
		if err := yaml.Unmarshal([]byte(p.body), &doc); err != nil {
			return nil, fmt.Errorf("spec.userData: part %d (%s) is not a NodeConfig document: %w", i+1, p.contentType, err)
		}
		flags = append(flags, stringsAt(doc, "spec", "kubelet", "flags")...)
		deepMerge(merged, doc)
	}
	var oursDoc map[string]any
	raw, _ := json.Marshal(ours) //nolint:errchkjson // plain data
	if err := json.Unmarshal(raw, &oursDoc); err != nil {
		return nil, fmt.Errorf("reading back the NodeConfig: %w", err)
	}
	delete(oursDoc, "apiVersion")
	delete(oursDoc, "kind")
	if spec, ok := oursDoc["spec"].(map[string]any); ok {
		if kubelet, ok := spec["kubelet"].(map[string]any); ok {
			delete(kubelet, "flags") // compared as labels below
		}
	}
	out := replaced(merged, oursDoc, "")
	userLabels := flagLabels(flags)
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		if v, ok := userLabels[k]; ok && v != labels[k] {
			out = append(out, "--node-labels "+k)
		}
	}
	return out, nil
}

// flagLabels reads the labels of kubelet --node-labels flags, a later
// value of a key over an earlier one, as the kubelet's flag parsing does.
func flagLabels(flags []string) map[string]string {
	out := map[string]string{}
	for _, f := range flags {
		list, ok := strings.CutPrefix(f, "--node-labels=")
		if !ok {
			continue
		}
		for _, kv := range strings.Split(list, ",") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				out[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		}
	}
	return out
}

func isNodeConfig(contentType string) bool {
	return strings.HasPrefix(strings.TrimSpace(contentType), contentTypeNodeConfig)
}

func stringsAt(doc map[string]any, path ...string) []string {
	var cur any = doc
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	list, _ := cur.([]any)
	var out []string
	for _, v := range list {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
