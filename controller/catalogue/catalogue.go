// Package catalogue is Stowage's built-in EC2 instance catalogue: facts on real
// instance types (data/ec2-instance-types.csv, sources in data/README.md) and the
// EKS formulas that turn them into schedulable instance types. It feeds the demo,
// the tests and the simulator, and backs the AWS layer's prices when the Pricing
// API cannot be reached.
package catalogue

import (
	_ "embed"
	"encoding/csv"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

//go:embed data/ec2-instance-types.csv
var instanceTypesCSV string

// Info holds the facts on one EC2 instance type.
type Info struct {
	Name                 string
	Family               string
	Category             string
	Generation           int
	Size                 string
	Arch                 string
	VCPU                 int64
	MemoryMiB            int64
	GPUCount             int64
	GPUName              string
	GPUManufacturer      string
	GPUMemoryMiB         int64
	AcceleratorCount     int64
	AcceleratorName      string
	LocalNVMeGiB         int64
	NetworkBandwidthMbps int64
	Hypervisor           string
	MaxENIs              int64
	IPv4PerENI           int64
	MaxPodsENI           int64
	// OnDemandPrice is the us-east-1 Linux on-demand price in US dollars per hour.
	OnDemandPrice float64

	// AcceleratorManufacturer makes the accelerators: aws for Inferentia and Trainium.
	AcceleratorManufacturer string
}

var columns = []string{"name", "family", "category", "generation", "size", "arch", "vcpu", "memory_mib",
	"gpu_count", "gpu_name", "gpu_manufacturer", "gpu_memory_mib", "accelerator_count", "accelerator_name",
	"accelerator_manufacturer", "local_nvme_gib", "network_bandwidth_mbps", "hypervisor", "max_enis",
	"ipv4_per_eni", "max_pods_eni", "on_demand_usd_per_hour_us_east_1"}

// Builtin returns the built-in instance facts, sorted by name.
func Builtin() []Info {
	infos, err := Parse(instanceTypesCSV)
	if err != nil {
		panic(fmt.Sprintf("parsing the built-in catalogue: %v", err))
	}
	return infos
}

// Parse reads instance facts in the CSV format of data/ec2-instance-types.csv.
// Every error names the line and column.
func Parse(text string) ([]Info, error) {
	r := csv.NewReader(strings.NewReader(text))
	r.FieldsPerRecord = len(columns)
	rows, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("reading catalogue CSV: %w", err)
	}
	if len(rows) == 0 || !slices.Equal(rows[0], columns) {
		return nil, fmt.Errorf("reading catalogue CSV: the header must be %s", strings.Join(columns, ","))
	}
	infos := make([]Info, 0, len(rows)-1)
	seen := map[string]bool{}
	for i, row := range rows[1:] {
		info, err := parseRow(row)
		if err != nil {
			return nil, fmt.Errorf("reading catalogue CSV line %d: %w", i+2, err)
		}
		if seen[info.Name] {
			return nil, fmt.Errorf("reading catalogue CSV line %d: instance type %s is listed twice", i+2, info.Name)
		}
		seen[info.Name] = true
		infos = append(infos, info)
	}
	slices.SortFunc(infos, func(a, b Info) int { return strings.Compare(a.Name, b.Name) })
	return infos, nil
}

type rowReader struct {
	row []string
	err error
}

func (r *rowReader) str(col int) string { return r.row[col] }

func (r *rowReader) int(col int, required bool) int64 {
	v := r.row[col]
	if v == "" && !required {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if (err != nil || n < 0) && r.err == nil {
		r.err = fmt.Errorf("column %s: %q is not a non-negative integer", columns[col], v)
	}
	return n
}

func (r *rowReader) float(col int) float64 {
	f, err := strconv.ParseFloat(r.row[col], 64)
	if (err != nil || !(f > 0) || math.IsInf(f, 1)) && r.err == nil {
		r.err = fmt.Errorf("column %s: %q is not a positive price", columns[col], r.row[col])
	}
	return f
}

func parseRow(row []string) (Info, error) {
	r := &rowReader{row: row}
	info := Info{
		Name: r.str(0), Family: r.str(1), Category: r.str(2), Generation: int(r.int(3, true)), Size: r.str(4),
		Arch: r.str(5), VCPU: r.int(6, true), MemoryMiB: r.int(7, true), GPUCount: r.int(8, false),
		GPUName: r.str(9), GPUManufacturer: r.str(10), GPUMemoryMiB: r.int(11, false),
		AcceleratorCount: r.int(12, false), AcceleratorName: r.str(13), AcceleratorManufacturer: r.str(14), LocalNVMeGiB: r.int(15, false),
		NetworkBandwidthMbps: r.int(16, true), Hypervisor: r.str(17), MaxENIs: r.int(18, true),
		IPv4PerENI: r.int(19, true), MaxPodsENI: r.int(20, true), OnDemandPrice: r.float(21),
	}
	if r.err == nil && (info.Name == "" || info.Family == "" || (info.Arch != "amd64" && info.Arch != "arm64")) {
		r.err = fmt.Errorf("name, family and arch (amd64 or arm64) are required")
	}
	return info, r.err
}
