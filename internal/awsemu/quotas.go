package awsemu

import (
	"fmt"
	"strings"
	"unicode"
)

// QuotaBucket names one of EC2's per-account vCPU quotas: an instance class and
// a market. EC2 counts the vCPUs of an account's running and pending instances
// per bucket, for example "Running On-Demand Standard (A, C, D, H, I, M, R, T,
// Z) instances" or "All Standard (A, C, D, H, I, M, R, T, Z) Spot Instance
// Requests", and refuses a launch that would go over.
//
// The model is simplified: one bucket per class letter group and market (EC2
// splits a few classes further), instances in a Capacity Reservation are not
// counted, and a spot request is counted from launch until the instance stops.
type QuotaBucket struct {
	// Class is QuotaClass of the instance type.
	Class string
	// CapacityType is CapacityOnDemand or CapacitySpot.
	CapacityType string
}

// Quota classes, after the EC2 vCPU quota names.
const (
	QuotaStandard   = "standard" // A, C, D, H, I, M, R, T, Z
	QuotaGVT        = "g"        // G and VT
	QuotaP          = "p"
	QuotaInf        = "inf"
	QuotaTrn        = "trn"
	QuotaX          = "x"
	QuotaF          = "f"
	QuotaDL         = "dl"
	QuotaHPC        = "hpc"
	QuotaHighMemory = "high-memory" // u-*
	QuotaMac        = "mac"
)

// classByPrefix maps the letters of a family before its generation to a quota
// class; families absent from it fall back to their first letter.
var classByPrefix = map[string]string{
	"inf": QuotaInf, "trn": QuotaTrn, "dl": QuotaDL, "hpc": QuotaHPC, "vt": QuotaGVT, "g": QuotaGVT, "gr": QuotaGVT,
	"p": QuotaP, "x": QuotaX, "f": QuotaF, "u": QuotaHighMemory, "mac": QuotaMac,
}

// QuotaClass returns the vCPU quota class of an instance type: m6i.large is
// standard, g5.xlarge is g, inf2.xlarge is inf, u-6tb1.metal is high-memory.
func QuotaClass(instanceType string) string {
	family, _, _ := strings.Cut(instanceType, ".")
	prefix, _, _ := strings.Cut(family, "-")
	if i := strings.IndexFunc(prefix, unicode.IsDigit); i >= 0 {
		prefix = prefix[:i]
	}
	if c, ok := classByPrefix[prefix]; ok {
		return c
	}
	if prefix != "" && strings.ContainsRune("acdhimrtz", rune(prefix[0])) {
		return QuotaStandard
	}
	return prefix
}

// SetVCPULimit sets a bucket's vCPU limit; a negative limit removes it (no limit).
func (e *Emulator) SetVCPULimit(b QuotaBucket, vcpus int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if vcpus < 0 {
		delete(e.vcpuLimits, b)
		return
	}
	e.vcpuLimits[b] = vcpus
}

// VCPUsInUse counts the vCPUs of pending and running instances in a bucket.
func (e *Emulator) VCPUsInUse(b QuotaBucket) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.advanceLocked()
	return e.vcpusInUseLocked(b)
}

func (e *Emulator) vcpusInUseLocked(b QuotaBucket) int {
	n := 0
	for _, id := range e.order {
		in := e.instances[id]
		if (in.State == StatePending || in.State == StateRunning) && in.ReservationID == "" &&
			in.CapacityType == b.CapacityType && QuotaClass(in.InstanceType) == b.Class {
			n += int(e.types[in.InstanceType].VCPU)
		}
	}
	return n
}

// quotaErrLocked refuses a launch that would take its bucket over its limit, in
// the error EC2 gives: VcpuLimitExceeded on demand, MaxSpotInstanceCountExceeded for spot.
func (e *Emulator) quotaErrLocked(o FleetOverride, lc string) *FleetError {
	b := QuotaBucket{Class: QuotaClass(o.InstanceType), CapacityType: lc}
	limit, ok := e.vcpuLimits[b]
	if !ok || e.vcpusInUseLocked(b)+int(e.types[o.InstanceType].VCPU) <= limit {
		return nil
	}
	if lc == CapacitySpot {
		return fleetErr(o, lc, "MaxSpotInstanceCountExceeded", "Max spot instance count exceeded")
	}
	return fleetErr(o, lc, "VcpuLimitExceeded", fmt.Sprintf("You have requested more vCPU capacity than your current vCPU limit of %d allows "+
		"for the instance bucket that the specified instance type belongs to. Please visit http://aws.amazon.com/contact-us/ec2-request "+
		"to request an adjustment to this limit.", limit))
}
