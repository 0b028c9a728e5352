package cas

// option is one way to scale up: count nodes of group for pods.
type option struct {
	group *NodeGroup
	count int
	pods  []*podInfo
}

// leastWaste is CA's least-waste expander: the option leaving the smallest
// fraction of idle CPU plus idle memory on its new nodes. CA breaks ties at
// random; the model takes the first option, and options come in group name
// order, so the result is reproducible.
func leastWaste(opts []option) *option {
	var best *option
	var bestScore float64
	for i := range opts {
		s := waste(&opts[i])
		if best == nil || s < bestScore {
			best, bestScore = &opts[i], s
		}
	}
	return best
}

func waste(o *option) float64 {
	var cpu, mem int64
	for _, p := range o.pods {
		cpu += p.requests.CPU
		mem += p.requests.Memory
	}
	availCPU := o.group.Allocatable.CPU * int64(o.count)
	availMem := o.group.Allocatable.Memory * int64(o.count)
	return float64(availCPU-cpu)/float64(availCPU) + float64(availMem-mem)/float64(availMem)
}
