// Package nodeboot reads an EC2 instance's user data the way the node's own
// bootstrap does, with parsers Stowage's writer does not use: an AL2023
// node's nodeadm (a MIME multi-part message of NodeConfig documents, merged
// in order) and a Bottlerocket node's settings (one TOML document). From
// what it read, and nodeadm's rules over the instance type's facts, it
// works out the kubelet configuration and the Node the kubelet registers.
// The bed's kubelet and the simulator's stand on it; it never calls
// Stowage's catalogue, solver or user-data writer.
package nodeboot

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/textproto"
	"strings"

	"github.com/BurntSushi/toml"
	"sigs.k8s.io/yaml"
)

// The families of node images, by how they read their user data.
const (
	AL2023       = "al2023"
	Bottlerocket = "bottlerocket"
)

// UserData is what a node read from its user data.
type UserData struct {
	Family string
	// Documents are an AL2023 node's NodeConfig documents as written, in
	// order; NodeConfig is their merge, as nodeadm merges them.
	Documents  [][]byte
	NodeConfig NodeConfig
	// Scripts are the shell-script parts (run by cloud-init, not merged).
	Scripts []string
	// Settings is a Bottlerocket node's TOML document.
	Settings map[string]any
}

// NodeConfig is the part of nodeadm's NodeConfig (node.eks.aws/v1alpha1)
// the kubelet's configuration depends on, under the schema's field names.
type NodeConfig struct {
	Spec struct {
		Cluster struct {
			Name                 string `json:"name"`
			APIServerEndpoint    string `json:"apiServerEndpoint"`
			CertificateAuthority []byte `json:"certificateAuthority"`
			CIDR                 string `json:"cidr"`
		} `json:"cluster"`
		Kubelet struct {
			// Config is the kubelet configuration nodeadm writes to the drop-in.
			Config            map[string]json.RawMessage `json:"config"`
			Flags             []string                   `json:"flags"`
			MaxPodsExpression string                     `json:"maxPodsExpression"`
		} `json:"kubelet"`
		Instance struct {
			LocalStorage struct {
				Strategy string `json:"strategy"`
			} `json:"localStorage"`
		} `json:"instance"`
	} `json:"spec"`
}

// Read reads raw user data as a node of the family does.
func Read(family string, raw []byte) (*UserData, error) {
	switch family {
	case AL2023:
		return readAL2023(raw)
	case Bottlerocket:
		settings := map[string]any{}
		if _, err := toml.Decode(string(raw), &settings); err != nil {
			return nil, fmt.Errorf("bottlerocket: the user data is not TOML: %w", err)
		}
		return &UserData{Family: family, Settings: settings}, nil
	}
	return nil, fmt.Errorf("no node image reads user data as %q: want %s or %s", family, AL2023, Bottlerocket)
}

// readAL2023 reads a MIME multi-part message, or a NodeConfig document on
// its own, and merges the NodeConfig documents as nodeadm does; nodeadm's
// validation then requires the cluster's name, endpoint, CA and CIDR.
func readAL2023(raw []byte) (*UserData, error) {
	ud := &UserData{Family: AL2023}
	parts, err := mimeParts(raw)
	if err != nil {
		return nil, err
	}
	merged := map[string]any{}
	for i, p := range parts {
		media, _, _ := mime.ParseMediaType(p.contentType)
		switch media {
		case "application/node.eks.aws":
			var doc map[string]any
			if err := yaml.Unmarshal(p.body, &doc); err != nil {
				return nil, fmt.Errorf("al2023: part %d is not a NodeConfig document: %w", i+1, err)
			}
			ud.Documents = append(ud.Documents, p.body)
			mergeNodeConfig(merged, doc)
		case "text/x-shellscript":
			ud.Scripts = append(ud.Scripts, string(p.body))
		}
	}
	b, _ := json.Marshal(merged) //nolint:errchkjson // decoded JSON
	if err := json.Unmarshal(b, &ud.NodeConfig); err != nil {
		return nil, fmt.Errorf("al2023: the NodeConfig does not decode: %w", err)
	}
	c := ud.NodeConfig.Spec.Cluster
	if c.Name == "" || c.APIServerEndpoint == "" || c.CertificateAuthority == nil || c.CIDR == "" {
		return nil, errors.New("al2023: nodeadm requires spec.cluster's name, apiServerEndpoint, certificateAuthority and cidr")
	}
	return ud, nil
}

type part struct {
	contentType string
	body        []byte
}

// mimeParts splits a MIME multi-part message; other user data is one
// NodeConfig document, as nodeadm reads a plain document.
func mimeParts(raw []byte) ([]part, error) {
	r := textproto.NewReader(bufio.NewReader(strings.NewReader(string(raw))))
	header, err := r.ReadMIMEHeader()
	media, params, perr := mime.ParseMediaType(header.Get("Content-Type"))
	if err != nil || perr != nil || !strings.HasPrefix(media, "multipart/") {
		return []part{{"application/node.eks.aws", raw}}, nil
	}
	mr := multipart.NewReader(r.R, params["boundary"])
	var parts []part
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return parts, nil
		}
		if err != nil {
			return nil, fmt.Errorf("al2023: reading MIME part %d: %w", len(parts)+1, err)
		}
		body, err := io.ReadAll(p)
		if err != nil {
			return nil, fmt.Errorf("al2023: reading MIME part %d: %w", len(parts)+1, err)
		}
		parts = append(parts, part{p.Header.Get("Content-Type"), body})
	}
}

// mergeNodeConfig lays src over dst as nodeadm's NodeConfig.Merge does: a
// value src sets replaces dst's, kubelet flags are appended, and the
// kubelet config is merged key by key, nested tables too.
func mergeNodeConfig(dst, src map[string]any) {
	flags := append(listAt(dst, "spec", "kubelet", "flags"), listAt(src, "spec", "kubelet", "flags")...)
	deepMerge(dst, src)
	if len(flags) > 0 {
		tableAt(dst, "spec", "kubelet")["flags"] = flags
	}
}

func deepMerge(dst, src map[string]any) {
	for k, v := range src {
		sub, isMap := v.(map[string]any)
		cur, curIsMap := dst[k].(map[string]any)
		switch {
		case isMap && curIsMap:
			deepMerge(cur, sub)
		case v == nil || v == "":
			// mergo leaves dst alone where src is empty
		default:
			dst[k] = v
		}
	}
}

// tableAt returns the table at path, creating it when missing.
func tableAt(m map[string]any, path ...string) map[string]any {
	for _, p := range path {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	return m
}

func listAt(m map[string]any, path ...string) []any {
	var cur any = m
	for _, p := range path {
		t, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = t[p]
	}
	l, _ := cur.([]any)
	return l
}
