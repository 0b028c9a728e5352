package state

import schedulingv1 "k8s.io/api/scheduling/v1"

// UpdatePriorityClass records a PriorityClass.
func (c *Cluster) UpdatePriorityClass(pc *schedulingv1.PriorityClass) {
	c.write(func() { c.priorityClasses.put(pc) })
}

// DeletePriorityClass forgets a PriorityClass.
func (c *Cluster) DeletePriorityClass(pc *schedulingv1.PriorityClass) {
	c.write(func() { c.priorityClasses.remove(pc) })
}

// priorityValues is PriorityClass name -> value, for the pods the Priority
// admission plugin did not give spec.priority (it was off when they were
// created); nil when there is none. The caller holds the lock.
func (c *Cluster) priorityValues() map[string]int32 {
	if len(c.priorityClasses) == 0 {
		return nil
	}
	out := make(map[string]int32, len(c.priorityClasses))
	for name, pc := range c.priorityClasses {
		out[name] = pc.Value
	}
	return out
}
