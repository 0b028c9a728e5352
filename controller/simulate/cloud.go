package simulate

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/hashicorp/go-hclog"
	clocktesting "k8s.io/utils/clock/testing"

	stowaws "github.com/stowage-dev/stowage/controller/aws"
	"github.com/stowage-dev/stowage/controller/aws/amifamily"
	"github.com/stowage-dev/stowage/internal/awsemu"
)

// unlimited is the capacity of an offering no shortage window holds.
const unlimited = 1 << 20

// kubernetesVersion is the version the simulated cluster runs and its images are published for.
const kubernetesVersion = "1.37"

// inProcess serves the SDK's requests from the emulator's handler without a
// socket: the real clients, signing and XML/JSON protocols, no network.
type inProcess struct{ h http.Handler }

func (t inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, req)
	return rec.Result(), nil
}

// newEmulator builds the capacity model: the built-in catalogue in every zone
// of the region, a VPC whose subnets and security group carry
// stowage.dev/discovery=<cluster>, the EKS images, and every role the
// NodeClasses name.
func newEmulator(s *Scenario, clk *clocktesting.FakeClock, seed int64) (*awsemu.Emulator, map[string]string, error) {
	cfg := awsemu.DefaultConfig()
	cfg.Clock, cfg.Seed = clk, seed
	cfg.Region = s.region()
	cfg.Zones = awsemu.ZonesFor(cfg.Region, len(s.zones()))
	for i, z := range cfg.Zones {
		if z.Name != s.zones()[i] {
			return nil, nil, fmt.Errorf("Scenario %s: spec.zones: %q is not zone %d of %s; use %s", s.Name, s.zones()[i], i+1, cfg.Region, zoneNames(cfg.Zones))
		}
	}
	cfg.InstanceTypes = awsemu.BuiltinCatalogue()
	cfg.PendingDelay, cfg.ShuttingDownDelay = 0, 30*time.Second
	cfg.PoolCapacity = unlimited
	cfg.Logger = hclog.NewNullLogger()
	emu := awsemu.New(cfg)
	emu.SeedDefaultNetwork(s.Name)
	images := emu.SeedEKSImages(kubernetesVersion)
	for _, nc := range s.NodeClasses {
		if nc.Spec.Role != "" {
			emu.AddRole(nc.Spec.Role)
		}
	}
	return emu, images, nil
}

func zoneNames(zs []awsemu.Zone) []string {
	out := make([]string, len(zs))
	for i, z := range zs {
		out[i] = z.Name
	}
	return out
}

// newCloudProvider is Stowage's real AWS cloud provider whose SDK clients talk
// to the emulator in process.
func newCloudProvider(s *Scenario, emu *awsemu.Emulator, clk *clocktesting.FakeClock, classes stowaws.NodeClasses) *stowaws.CloudProvider {
	cfg := awssdk.Config{
		Region:       s.region(),
		Credentials:  credentials.NewStaticCredentialsProvider(awsemu.DefaultAccessKeyID, awsemu.DefaultSecretAccessKey, ""),
		BaseEndpoint: awssdk.String("http://awsemu.simulator"),
		HTTPClient:   &http.Client{Transport: inProcess{emu.Handler()}},
		Retryer: func() awssdk.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) { o.MaxAttempts = 1 })
		},
	}
	return stowaws.New(stowaws.ClientsFromConfig(cfg), classes, stowaws.Options{
		Cluster:           s.cluster(),
		Region:            s.region(),
		KubernetesVersion: kubernetesVersion,
		Clock:             clk,
	})
}

// DefaultClusterCIDR is a simulated cluster's service CIDR when its
// scenario names none: one of the two EKS picks for a cluster created
// without one. It is the simulation's only: `stowage run` reads the real
// cluster's, or refuses to start.
const DefaultClusterCIDR = "172.20.0.0/16"

// cluster is what the simulated nodes' user data names.
func (s *Scenario) cluster() amifamily.Cluster {
	c := amifamily.Cluster{Name: s.Name, Endpoint: "https://simulator.invalid", CABundle: "c2ltdWxhdG9y", CIDR: s.Spec.ClusterCIDR}
	if c.CIDR == "" {
		c.CIDR = DefaultClusterCIDR
	}
	return c
}

func (s *Scenario) region() string {
	if s.Spec.Region == "" {
		return "us-east-1"
	}
	return s.Spec.Region
}

func (s *Scenario) zones() []string {
	if len(s.Spec.Zones) == 0 {
		return zoneNames(awsemu.ZonesFor(s.region(), 3))
	}
	return s.Spec.Zones
}

// capacityModel applies the scenario's shortage windows to the emulator as
// the virtual clock passes them.
type capacityModel struct {
	windows []CapacityWindow
	emu     *awsemu.Emulator
	active  []bool
}

func newCapacityModel(s *Scenario, emu *awsemu.Emulator) *capacityModel {
	return &capacityModel{windows: s.Spec.Capacity, emu: emu, active: make([]bool, len(s.Spec.Capacity))}
}

// setZoneOut makes every offering of a zone short (whatever capacity the
// windows give it, or an instance stopping there gives back), or clears it.
func (m *capacityModel) setZoneOut(zone string, out bool) {
	var keys []awsemu.PoolKey
	for _, key := range m.emu.PoolKeys() {
		if key.Zone == zone {
			keys = append(keys, key)
		}
	}
	m.emu.SetShortage(out, keys...)
}

// apply opens and closes windows at elapsed time t.
func (m *capacityModel) apply(t time.Duration) {
	for i, w := range m.windows {
		on := t >= w.From.Duration && (w.Until.Duration == 0 || t < w.Until.Duration)
		if on == m.active[i] {
			continue
		}
		m.active[i] = on
		key := awsemu.PoolKey{InstanceType: w.InstanceType, Zone: w.Zone, CapacityType: w.CapacityType}
		if on {
			m.emu.SetCapacity(key, w.Available)
		} else {
			m.emu.SetCapacity(key, unlimited)
		}
	}
}

// next is the next time a window opens or closes after t, or false.
func (m *capacityModel) next(t time.Duration) (time.Duration, bool) {
	var times []time.Duration
	for _, w := range m.windows {
		for _, x := range []time.Duration{w.From.Duration, w.Until.Duration} {
			if x > t {
				times = append(times, x)
			}
		}
	}
	if len(times) == 0 {
		return 0, false
	}
	return slices.Min(times), true
}

// staticClasses serves the scenario's NodeClasses to the cloud provider.
func staticClasses(s *Scenario) stowaws.StaticNodeClasses {
	out := stowaws.StaticNodeClasses{}
	for _, nc := range s.NodeClasses {
		out[nc.Name] = nc
	}
	return out
}
