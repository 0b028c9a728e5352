package cas

import (
	"errors"
	"fmt"
	"time"
)

// Config holds the Cluster Autoscaler flags the model honours. DefaultConfig
// returns CA's documented defaults.
type Config struct {
	// ScanInterval is how often the simulator calls RunOnce (--scan-interval).
	ScanInterval time.Duration
	// ScaleDownUtilizationThreshold is the utilization under which a node may be
	// unneeded (--scale-down-utilization-threshold).
	ScaleDownUtilizationThreshold float64
	// ScaleDownUnneededTime is how long a node must stay unneeded before it is
	// deleted (--scale-down-unneeded-time).
	ScaleDownUnneededTime time.Duration
	// ScaleDownDelayAfterAdd pauses deletions after a scale-up (--scale-down-delay-after-add).
	ScaleDownDelayAfterAdd time.Duration
	// ScaleDownDelayAfterDelete pauses deletions after a deletion
	// (--scale-down-delay-after-delete, which defaults to the scan interval).
	ScaleDownDelayAfterDelete time.Duration
	// ScaleDownDelayAfterFailure pauses deletions after a failed one (--scale-down-delay-after-failure).
	ScaleDownDelayAfterFailure time.Duration
	// MaxEmptyBulkDelete caps the empty nodes deleted in one loop (--max-empty-bulk-delete).
	MaxEmptyBulkDelete int
	// MaxNodeProvisionTime is how long a launched node may take to become Ready
	// before its group is backed off and the node removed (--max-node-provision-time).
	MaxNodeProvisionTime time.Duration
	// InitialNodeGroupBackoffDuration is the first backoff of a failing group.
	InitialNodeGroupBackoffDuration time.Duration
	// MaxNodeGroupBackoffDuration caps the doubling backoff.
	MaxNodeGroupBackoffDuration time.Duration
	// NodeGroupBackoffResetTimeout forgets a group's backoff this long after its last failure.
	NodeGroupBackoffResetTimeout time.Duration
	// MaxNodesPerScaleUp caps the nodes one scale-up asks for (--max-nodes-per-scaleup).
	MaxNodesPerScaleUp int
}

// DefaultConfig returns Cluster Autoscaler's defaults.
func DefaultConfig() Config {
	return Config{
		ScanInterval:                    10 * time.Second,
		ScaleDownUtilizationThreshold:   0.5,
		ScaleDownUnneededTime:           10 * time.Minute,
		ScaleDownDelayAfterAdd:          10 * time.Minute,
		ScaleDownDelayAfterDelete:       10 * time.Second,
		ScaleDownDelayAfterFailure:      3 * time.Minute,
		MaxEmptyBulkDelete:              10,
		MaxNodeProvisionTime:            15 * time.Minute,
		InitialNodeGroupBackoffDuration: 5 * time.Minute,
		MaxNodeGroupBackoffDuration:     30 * time.Minute,
		NodeGroupBackoffResetTimeout:    3 * time.Hour,
		MaxNodesPerScaleUp:              1000,
	}
}

// Option adjusts the Config New starts from (DefaultConfig).
type Option func(*Config)

// Validate reports the first setting that cannot work, naming it.
func (c Config) Validate() error {
	durations := []struct {
		name string
		d    time.Duration
	}{
		{"ScanInterval", c.ScanInterval},
		{"ScaleDownUnneededTime", c.ScaleDownUnneededTime},
		{"MaxNodeProvisionTime", c.MaxNodeProvisionTime},
		{"InitialNodeGroupBackoffDuration", c.InitialNodeGroupBackoffDuration},
		{"MaxNodeGroupBackoffDuration", c.MaxNodeGroupBackoffDuration},
		{"NodeGroupBackoffResetTimeout", c.NodeGroupBackoffResetTimeout},
	}
	for _, d := range durations {
		if d.d <= 0 {
			return fmt.Errorf("%s is %s; set it above zero", d.name, d.d)
		}
	}
	if c.ScaleDownDelayAfterAdd < 0 || c.ScaleDownDelayAfterDelete < 0 || c.ScaleDownDelayAfterFailure < 0 {
		return errors.New("scale-down delays must not be negative")
	}
	if c.ScaleDownUtilizationThreshold <= 0 || c.ScaleDownUtilizationThreshold > 1 {
		return fmt.Errorf("ScaleDownUtilizationThreshold is %v; set it in (0, 1]", c.ScaleDownUtilizationThreshold)
	}
	if c.MaxEmptyBulkDelete < 1 || c.MaxNodesPerScaleUp < 1 {
		return errors.New("MaxEmptyBulkDelete and MaxNodesPerScaleUp must be at least 1")
	}
	return nil
}
