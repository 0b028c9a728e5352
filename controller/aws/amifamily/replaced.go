package amifamily

import (
	"fmt"
	"maps"
	"slices"
)

// deepMerge lays src over dst: tables are merged key by key, any other value
// of src replaces dst's.
func deepMerge(dst, src map[string]any) {
	for k, v := range src {
		sub, isMap := v.(map[string]any)
		cur, curIsMap := dst[k].(map[string]any)
		if isMap && curIsMap {
			deepMerge(cur, sub)
			continue
		}
		dst[k] = v
	}
}

// replaced names the leaves of user that ours sets to another value, as
// dotted paths under prefix: what the user's settings lose to Stowage's.
func replaced(user, ours map[string]any, prefix string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(ours)) {
		u, ok := user[k]
		if !ok {
			continue
		}
		path := k
		if prefix != "" {
			path = prefix + "." + k
		}
		um, uIsMap := u.(map[string]any)
		om, oIsMap := ours[k].(map[string]any)
		switch {
		case uIsMap && oIsMap:
			out = append(out, replaced(um, om, path)...)
		case fmt.Sprint(u) != fmt.Sprint(ours[k]):
			out = append(out, path)
		}
	}
	return out
}
