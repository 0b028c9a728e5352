package provider_test

import (
	"strconv"
	"strings"
	"sync"
)

// lookup reads a dotted path with [i] indexes from an object's JSON.
func lookup(obj map[string]any, p string) (any, bool) {
	var cur any = obj
	for _, seg := range strings.Split(p, ".") {
		name, idx, hasIdx := strings.Cut(seg, "[")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[name]; !ok {
			return nil, false
		}
		if hasIdx {
			i, _ := strconv.Atoi(strings.TrimSuffix(idx, "]"))
			l, ok := cur.([]any)
			if !ok || i >= len(l) {
				return nil, false
			}
			cur = l[i]
		}
	}
	return cur, true
}

var (
	stowageOnce sync.Once
	stowagePath string
	stowageErr  error
)
