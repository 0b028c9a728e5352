package awsemu_test

import (
	"testing"

	"github.com/stowage-dev/stowage/internal/awsemu"
)

// TestVcpuQuotaBuckets: a launch over the account's vCPU quota fails in the
// fleet's errorSet with EC2's code per market, other classes are not affected,
// and a stopped instance frees its vCPUs.
func TestVcpuQuotaBuckets(t *testing.T) {
	cfg := awsemu.DefaultConfig()
	cfg.PendingDelay, cfg.ShuttingDownDelay = 0, 0
	cfg.VCPULimits = map[awsemu.QuotaBucket]int{
		{Class: awsemu.QuotaStandard, CapacityType: awsemu.CapacityOnDemand}: 4,
		{Class: awsemu.QuotaStandard, CapacityType: awsemu.CapacitySpot}:     0,
	}
	e := awsemu.New(cfg)
	subnets, _ := e.SeedDefaultNetwork("c")
	lt := templateFor(t, e, e.SeedEKSImages("1.37"))
	launch := func(instanceType, ct string) awsemu.FleetResult {
		res, err := e.CreateFleet(awsemu.FleetRequest{CapacityType: ct, TotalTargetCapacity: 1,
			Overrides: []awsemu.FleetOverride{{LaunchTemplateID: lt, InstanceType: instanceType, SubnetID: subnets[0]}}})
		if err != nil {
			t.Fatalf("CreateFleet: %v", err)
		}
		return res
	}
	first := launch("m6i.xlarge", "on-demand") // 4 of 4 vCPUs
	cases := []struct {
		instanceType, ct, wantCode string
	}{
		{"m6i.large", "on-demand", "VcpuLimitExceeded"},
		{"c6i.large", "spot", "MaxSpotInstanceCountExceeded"},
		{"g5.xlarge", "on-demand", ""}, // the G and VT quota
	}
	for _, tc := range cases {
		res := launch(tc.instanceType, tc.ct)
		got := ""
		if len(res.Errors) > 0 {
			got = res.Errors[0].Code
		}
		if got != tc.wantCode {
			t.Errorf("%s %s: fleet error %q, want %q", tc.ct, tc.instanceType, got, tc.wantCode)
		}
	}
	if _, err := e.Terminate(first.Instances[0].InstanceIDs...); err != nil {
		t.Fatalf("terminating: %v", err)
	}
	if res := launch("m6i.large", "on-demand"); len(res.Errors) != 0 {
		t.Fatalf("after freeing the quota: %+v", res.Errors)
	}
}

func TestQuotaClass(t *testing.T) {
	for name, want := range map[string]string{
		"m6i.large": "standard", "c7gn.xlarge": "standard", "r7iz.large": "standard", "t3.micro": "standard", "z1d.large": "standard",
		"im4gn.large": "standard", "g5.xlarge": "g", "vt1.3xlarge": "g", "p5.48xlarge": "p", "inf2.xlarge": "inf",
		"trn1.32xlarge": "trn", "dl1.24xlarge": "dl", "hpc7g.4xlarge": "hpc", "x2idn.16xlarge": "x", "f1.2xlarge": "f",
		"u-6tb1.metal": "high-memory", "mac2.metal": "mac",
	} {
		if got := awsemu.QuotaClass(name); got != want {
			t.Errorf("QuotaClass(%s) = %q, want %q", name, got, want)
		}
	}
}
