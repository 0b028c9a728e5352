package report

// Series is a System's state sampled every Report.Step from Report.Start: the
// i-th value of every column is the sample at Start + i*Step. Every column has
// Len() values.
type Series struct {
	// tier -> pending pods
	PendingByTier map[string][]int
	// instance type -> nodes
	NodesByInstanceType map[string][]int
	// zone -> nodes
	NodesByZone map[string][]int
	// capacity type -> nodes
	NodesByCapacityType map[string][]int
	// capacity type -> pods running on its nodes
	PodsByCapacityType map[string][]int
	// CostPerHour is the price of the nodes running, in dollars an hour.
	CostPerHour []float64
	// capacity type -> the price of its nodes, in dollars an hour
	CostPerHourByCapacityType map[string][]float64
}

// Sample is the state at one step, as Series.Append takes it; keys missing
// from a sample count as 0.
type Sample struct {
	// tier -> pending pods
	PendingByTier map[string]int
	// instance type -> nodes
	NodesByInstanceType map[string]int
	// zone -> nodes
	NodesByZone map[string]int
	// capacity type -> nodes
	NodesByCapacityType map[string]int
	// capacity type -> pods running on its nodes
	PodsByCapacityType map[string]int
	CostPerHour        float64
	// capacity type -> the price of its nodes
	CostPerHourByCapacityType map[string]float64
}

// Len is the number of samples.
func (s *Series) Len() int { return len(s.CostPerHour) }

// Append adds one sample. A key seen for the first time gets zeros for the
// samples before it.
func (s *Series) Append(sm Sample) {
	n := s.Len()
	s.PendingByTier = appendColumn(s.PendingByTier, sm.PendingByTier, n)
	s.NodesByInstanceType = appendColumn(s.NodesByInstanceType, sm.NodesByInstanceType, n)
	s.NodesByZone = appendColumn(s.NodesByZone, sm.NodesByZone, n)
	s.NodesByCapacityType = appendColumn(s.NodesByCapacityType, sm.NodesByCapacityType, n)
	s.PodsByCapacityType = appendColumn(s.PodsByCapacityType, sm.PodsByCapacityType, n)
	s.CostPerHourByCapacityType = appendColumn(s.CostPerHourByCapacityType, sm.CostPerHourByCapacityType, n)
	s.CostPerHour = append(s.CostPerHour, sm.CostPerHour)
}

func appendColumn[T int | float64](cols map[string][]T, values map[string]T, n int) map[string][]T {
	if cols == nil {
		cols = map[string][]T{}
	}
	for k := range values {
		if _, ok := cols[k]; !ok {
			cols[k] = make([]T, n, n+1)
		}
	}
	for k, col := range cols {
		cols[k] = append(col, values[k])
	}
	return cols
}

// PendingTotal is the pending pods of every tier, per sample.
func (s *Series) PendingTotal() []int { return sumColumns(s.PendingByTier, s.Len()) }

// NodesTotal is the nodes of every instance type, per sample.
func (s *Series) NodesTotal() []int { return sumColumns(s.NodesByInstanceType, s.Len()) }

func sumColumns(cols map[string][]int, n int) []int {
	out := make([]int, n)
	for _, col := range cols {
		for i := range min(n, len(col)) {
			out[i] += col[i]
		}
	}
	return out
}
