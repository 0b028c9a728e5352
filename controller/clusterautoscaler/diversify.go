package clusterautoscaler

import (
	"slices"
	"sort"
	"strings"

	"github.com/stowage-dev/stowage/controller/catalogue"
)

// MaxTypes caps the instance types a diversified list holds by default.
const MaxTypes = 8

// Diversify widens the instance types a node group launches into a list a
// pool can fall back across when EC2 is short of one, keeping what any pod
// of the group fits on:
//
//  1. the group's own types, in their order;
//  2. each type's next size up in its family: twice the vCPUs and memory,
//     the same or twice the GPUs (g5.12xlarge -> g5.24xlarge), which holds
//     whatever one node held;
//  3. each type's same-shape siblings: the same architecture, vCPUs,
//     memory (so the same vCPU:memory ratio), GPU and accelerator count and
//     GPU maker, the same category (c, m, r, g, p, ...), a generation no
//     more than one older, no metal (c6i.2xlarge -> c7i.2xlarge;
//     g5.12xlarge -> g6.12xlarge), cheapest first.
//
// The list stops at max types. Types the catalogue does not know are kept as
// given, without neighbours, and returned in unknown.
func Diversify(types []string, infos []catalogue.Info, max int) (out, unknown []string) {
	byName := map[string]catalogue.Info{}
	for _, i := range infos {
		byName[i.Name] = i
	}
	out = slices.Clone(types)
	var larger, siblings []catalogue.Info
	for _, t := range types {
		base, ok := byName[t]
		if !ok {
			unknown = append(unknown, t)
			continue
		}
		for _, c := range infos {
			switch {
			case slices.Contains(types, c.Name) || strings.Contains(c.Size, "metal"):
			case nextSize(base, c):
				larger = append(larger, c)
			case sameShape(base, c):
				siblings = append(siblings, c)
			}
		}
	}
	sort.SliceStable(siblings, func(i, j int) bool {
		if siblings[i].OnDemandPrice != siblings[j].OnDemandPrice {
			return siblings[i].OnDemandPrice < siblings[j].OnDemandPrice
		}
		return siblings[i].Name < siblings[j].Name
	})
	for _, c := range append(larger, siblings...) {
		if len(out) >= max {
			break
		}
		if !slices.Contains(out, c.Name) {
			out = append(out, c.Name)
		}
	}
	return out, unknown
}

func sameShape(a, b catalogue.Info) bool {
	return a.Arch == b.Arch && a.VCPU == b.VCPU && a.MemoryMiB == b.MemoryMiB && a.GPUCount == b.GPUCount &&
		a.GPUManufacturer == b.GPUManufacturer && a.AcceleratorCount == b.AcceleratorCount && a.Category == b.Category &&
		b.Generation >= a.Generation-1
}

func nextSize(a, b catalogue.Info) bool {
	return a.Family == b.Family && b.VCPU == 2*a.VCPU && b.MemoryMiB == 2*a.MemoryMiB &&
		(b.GPUCount == a.GPUCount || b.GPUCount == 2*a.GPUCount)
}
