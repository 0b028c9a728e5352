package testbed

import (
	"encoding/binary"
	"hash/fnv"
	"time"
)

// BootDelay is how long after its instance's launch a Node registers: an EKS
// node takes 60-120 s from RunInstances to a registered kubelet, the time in
// which the races between nodes coming up at staggered times happen. Each
// instance draws its delay uniformly in [Min, Max] from Seed and its id, so
// that a seed gives every instance the same delay run after run, whatever
// the order the bridge sees them in. The zero value registers at once.
type BootDelay struct {
	Min, Max time.Duration
	Seed     uint64
}

// RealisticBoot is an EKS node's boot, for the tests that need nodes to come
// up as real ones do; tests where speed matters leave Options.BootDelay zero.
var RealisticBoot = BootDelay{Min: 60 * time.Second, Max: 120 * time.Second, Seed: 1}

// For is the delay of the instance with the id.
func (d BootDelay) For(id string) time.Duration {
	if d.Max <= d.Min {
		return d.Min
	}
	h := fnv.New64a()
	_ = binary.Write(h, binary.LittleEndian, d.Seed)
	_, _ = h.Write([]byte(id))
	return d.Min + time.Duration(h.Sum64()%uint64(d.Max-d.Min+1))
}
