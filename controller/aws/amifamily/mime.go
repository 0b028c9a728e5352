package amifamily

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"mime"
	"mime/multipart"
	"net/textproto"
	"strings"

	"sigs.k8s.io/yaml"
)

// part is one part of a MIME multi-part user data document.
type part struct {
	contentType, body string
}

// customParts splits a NodeClass's AL2023 user data into the parts it
// carries: the parts of a MIME multi-part document (as Karpenter's examples
// write it, a NodeConfig and scripts), a NodeConfig document on its own, or
// else the whole as one shell script. A document cut short of its closing
// boundary keeps the parts read before the end.
func customParts(data string) ([]part, error) {
	if strings.TrimSpace(data) == "" {
		return nil, nil
	}
	if parts := mimeParts(data); len(parts) > 0 {
		return parts, nil
	}
	var doc struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if yaml.Unmarshal([]byte(data), &doc) == nil && doc.Kind == "NodeConfig" && strings.HasPrefix(doc.APIVersion, "node.eks.aws/") {
		return []part{{contentTypeNodeConfig, data}}, nil
	}
	return []part{{contentTypeShellScript, data}}, nil
}

// mimeParts reads the parts of a MIME multi-part message; none when data is not one.
func mimeParts(data string) []part {
	r := textproto.NewReader(bufio.NewReader(strings.NewReader(data)))
	header, err := r.ReadMIMEHeader()
	if err != nil {
		return nil
	}
	media, params, err := mime.ParseMediaType(header.Get("Content-Type"))
	if err != nil || !strings.HasPrefix(media, "multipart/") || params["boundary"] == "" {
		return nil
	}
	mr := multipart.NewReader(r.R, params["boundary"])
	var parts []part
	for {
		p, err := mr.NextPart()
		if err != nil {
			break
		}
		body, err := io.ReadAll(p)
		if err != nil && len(body) == 0 {
			break
		}
		ct := p.Header.Get("Content-Type")
		if ct == "" {
			ct = "text/plain"
		}
		parts = append(parts, part{ct, string(body)})
	}
	return parts
}

// writeMIME writes parts as a MIME multi-part message (RFC 2046, as
// cloud-init and nodeadm read it) whose boundary is derived from the
// parts, so that the same parts always give the same bytes.
func writeMIME(parts []part) string {
	boundary := boundaryFor(parts)
	var sb strings.Builder
	sb.WriteString("MIME-Version: 1.0\r\n")
	sb.WriteString("Content-Type: " + mime.FormatMediaType("multipart/mixed", map[string]string{"boundary": boundary}) + "\r\n\r\n")
	w := multipart.NewWriter(&sb)
	if err := w.SetBoundary(boundary); err != nil {
		panic("amifamily: a hex boundary is always valid: " + err.Error())
	}
	for _, p := range parts {
		pw, _ := w.CreatePart(textproto.MIMEHeader{"Content-Type": {p.contentType}}) // a strings.Builder does not fail
		_, _ = io.WriteString(pw, p.body)
	}
	_ = w.Close()
	return sb.String()
}

// boundaryFor is a boundary no part's body contains: a digest of the bodies,
// digested again in the unlikely case one does.
func boundaryFor(parts []part) string {
	h := sha256.New()
	for _, p := range parts {
		_, _ = io.WriteString(h, p.contentType+"\x00"+p.body+"\x00")
	}
	sum := h.Sum(nil)
	for {
		boundary := "stowage-" + hex.EncodeToString(sum[:12])
		clash := false
		for _, p := range parts {
			clash = clash || strings.Contains(p.body, boundary)
		}
		if !clash {
			return boundary
		}
		next := sha256.Sum256(sum)
		sum = next[:]
	}
}
