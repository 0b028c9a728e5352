package v1alpha1

import (
	"maps"
	"slices"
	"strings"
)

// NearestWellKnownLabel is the well-known label a mistyped or misplaced key
// most likely meant, as the Stowage key (karpenter.k8s.aws/instance-famly and
// karpenter.sh/instance-family both give stowage.dev/instance-family), or ""
// when none is close. Keys are compared whole and by their name after the
// domain, so that a known name under the wrong domain is found too.
func NearestWellKnownLabel(key string) string {
	_, name, _ := strings.Cut(key, "/")
	best, bestDist := "", 4
	for _, known := range knownKeys {
		_, knownName, _ := strings.Cut(known, "/")
		d := min(editDistance(key, known), editDistance(name, knownName)+1)
		if name == knownName {
			d = 0
		}
		if d < bestDist {
			best, bestDist = CanonicalLabelKey(known), d
		}
	}
	return best
}

// knownKeys are Stowage's well-known labels and Karpenter's aliases, sorted,
// so that ties break the same way every time.
var knownKeys = func() []string {
	keys := slices.Collect(maps.Keys(WellKnownLabels))
	keys = append(keys, slices.Collect(maps.Keys(KarpenterLabelAliases))...)
	slices.Sort(keys)
	return slices.DeleteFunc(keys, func(k string) bool { return k == LabelNodePool || k == "kubernetes.io/hostname" })
}()

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
