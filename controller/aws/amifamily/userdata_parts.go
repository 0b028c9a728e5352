package amifamily

import (
	"bufio"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/textproto"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
)

// part is one part of a MIME multi-part user data document.
type part struct {
	contentType, body string
}

// customParts splits a NodeClass's AL2023 user data into the parts it
// carries: the parts of a MIME multi-part document (as Karpenter's
// examples write it, a NodeConfig and scripts), or else the whole as one
// shell script. A document cut short of its closing boundary keeps the
// parts read before the end.
func customParts(data string) []part {
	script := []part{{`text/x-shellscript; charset="us-ascii"`, data}}
	r := textproto.NewReader(bufio.NewReader(strings.NewReader(data)))
	header, err := r.ReadMIMEHeader()
	if err != nil {
		return script
	}
	media, params, err := mime.ParseMediaType(header.Get("Content-Type"))
	if err != nil || !strings.HasPrefix(media, "multipart/") || params["boundary"] == "" {
		return script
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
	if len(parts) == 0 {
		return script
	}
	return parts
}

// durations renders grace periods as the kubelet reads them.
func durations(m map[string]metav1.Duration) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, d := range m {
		out[k] = d.Duration.String()
	}
	return out
}

// writeBottlerocketKubelet renders the NodeClass's kubelet settings as
// Bottlerocket's settings.kubernetes keys.
func writeBottlerocketKubelet(sb *strings.Builder, k *v1alpha1.KubeletConfiguration) {
	writeInts(sb, "%s = %d\n", []namedInt{{"eviction-max-pod-grace-period", k.EvictionMaxPodGracePeriod},
		{"image-gc-high-threshold-percent", k.ImageGCHighThresholdPercent}, {"image-gc-low-threshold-percent", k.ImageGCLowThresholdPercent}})
	if k.CPUCFSQuota != nil {
		fmt.Fprintf(sb, "cpu-cfs-quota-enforced = %t\n", *k.CPUCFSQuota)
	}
	writeTOMLTable(sb, "settings.kubernetes.kube-reserved", k.KubeReserved)
	writeTOMLTable(sb, "settings.kubernetes.system-reserved", k.SystemReserved)
	writeTOMLTable(sb, "settings.kubernetes.eviction-hard", k.EvictionHard)
	writeTOMLTable(sb, "settings.kubernetes.eviction-soft", k.EvictionSoft)
	writeTOMLTable(sb, "settings.kubernetes.eviction-soft-grace-period", durations(k.EvictionSoftGracePeriod))
}

// namedInt is a kubelet setting that is a count, in the order it is written.
type namedInt struct {
	name  string
	value *int32
}

// writeInts writes the settings that are set, as "key<sep>value" lines.
func writeInts(sb *strings.Builder, format string, settings []namedInt) {
	for _, s := range settings {
		if s.value != nil {
			fmt.Fprintf(sb, format, s.name, *s.value)
		}
	}
}
