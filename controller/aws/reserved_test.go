package aws_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/aws/instance"
	"github.com/stowage-dev/stowage/controller/cloudprovider"
	"github.com/stowage-dev/stowage/internal/awsemu"
)

const reservedZone = "us-east-1b"

func addReservation(e *env, count int, tags map[string]string) string {
	return e.emu.AddCapacityReservation(awsemu.CapacityReservation{InstanceType: "m6i.large", Zone: reservedZone,
		TotalInstanceCount: count, InstanceMatchCriteria: awsemu.MatchTargeted, Tags: tags})
}

// TestReservedCapacity launches claims one after another against a targeted
// reservation for m6i.large: reserved first when the claim allows it, then
// spot or on-demand once the reservation is full, with no fleet wasted on a
// reservation known to be full.
func TestReservedCapacity(t *testing.T) {
	all := []string{"reserved", "spot", "on-demand"}
	cases := []struct {
		name       string
		cts        []string
		size       int
		fillBehind bool     // another account fills the reservation after discovery
		want       []string // capacity type of each launch; "" for insufficient capacity
		wantFleets int
		wantLeft   int // room left in the reservation
	}{
		{name: "launches into the reservation first", cts: all, size: 2, want: []string{"reserved"}, wantFleets: 1, wantLeft: 1},
		{name: "falls back to spot once the reservation is full", cts: all, size: 1,
			want: []string{"reserved", "spot", "spot"}, wantFleets: 3, wantLeft: 0},
		{name: "a reservation filled behind its back falls back at once", cts: all, size: 1, fillBehind: true,
			want: []string{"spot", "spot"}, wantFleets: 3, wantLeft: 0},
		{name: "reserved before on-demand", cts: []string{"on-demand", "reserved"}, size: 1,
			want: []string{"reserved", "on-demand"}, wantFleets: 2, wantLeft: 0},
		{name: "reserved only and full is insufficient capacity", cts: []string{"reserved"}, size: 1,
			want: []string{"reserved", ""}, wantFleets: 1, wantLeft: 0},
		{name: "a claim that does not allow reserved leaves it alone", cts: []string{"spot", "on-demand"}, size: 1,
			want: []string{"spot"}, wantFleets: 1, wantLeft: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, awsemu.SmallCatalogue(), 3)
			id := addReservation(e, tc.size, nil)
			e.nc.Spec.CapacityReservationSelectorTerms = []v1alpha1.CapacityReservationSelectorTerm{{ID: id}}
			if _, err := e.cp.InstanceTypes(ctx(t), nodePool("default")); err != nil {
				t.Fatalf("discovering: %v", err)
			}
			if tc.fillBehind {
				e.emu.SetReservationAvailable(id, 0)
			}
			for i, want := range tc.want {
				got, err := e.cp.Create(ctx(t), nodeClaim("claim-"+string(rune('a'+i)), []string{"m6i.large"}, tc.cts))
				checkReservedLaunch(t, e, got, err, want, id)
			}
			if n := e.emu.Calls("CreateFleet"); n != tc.wantFleets {
				t.Errorf("CreateFleet calls = %d, want %d", n, tc.wantFleets)
			}
			if r, _ := e.emu.CapacityReservation(id); r.AvailableInstanceCount != tc.wantLeft {
				t.Errorf("reservation has room for %d, want %d", r.AvailableInstanceCount, tc.wantLeft)
			}
		})
	}
}

func checkReservedLaunch(t *testing.T, e *env, got *v1alpha1.NodeClaim, err error, want, reservation string) {
	t.Helper()
	if want == "" {
		if !cloudprovider.IsInsufficientCapacityError(err) {
			t.Fatalf("Create error = %v, want insufficient capacity", err)
		}
		return
	}
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if ct := got.Labels[v1alpha1.LabelCapacityType]; ct != want {
		t.Fatalf("launched %s, want %s", ct, want)
	}
	id, _ := instance.ParseProviderID(got.Status.ProviderID)
	in, _ := e.emu.Instance(id)
	if (want == "reserved") != (in.ReservationID == reservation) {
		t.Errorf("%s instance runs in reservation %q, want %q", want, in.ReservationID, reservation)
	}
	if want != "reserved" {
		return
	}
	if got.Labels[corev1.LabelTopologyZone] != reservedZone {
		t.Errorf("reserved instance in %s, want the reservation's zone %s", got.Labels[corev1.LabelTopologyZone], reservedZone)
	}
	seen, err := e.cp.Get(ctx(t), got.Status.ProviderID)
	if err != nil || seen.Labels[v1alpha1.LabelCapacityType] != "reserved" {
		t.Errorf("Get = %v, %v; want the instance seen as reserved", seen, err)
	}
}

// TestReservedOfferings: reservations appear as reserved offerings priced 0,
// with their id and room, only when active and selected; a terminated
// instance gives its place back after the next refresh.
func TestReservedOfferings(t *testing.T) {
	e := newEnv(t, awsemu.SmallCatalogue(), 3)
	e.nc.Spec.CapacityReservationSelectorTerms = []v1alpha1.CapacityReservationSelectorTerm{{Tags: map[string]string{"team": "ml"}}}
	id := addReservation(e, 1, map[string]string{"team": "ml"})
	addReservation(e, 5, map[string]string{"team": "web"}) // not selected
	e.emu.AddCapacityReservation(awsemu.CapacityReservation{InstanceType: "m6i.large", Zone: reservedZone, TotalInstanceCount: 5,
		EndDateType: awsemu.EndLimited, EndDate: time.Now().Add(-time.Hour), Tags: map[string]string{"team": "ml"}}) // expired
	want := cloudprovider.Offering{Zone: reservedZone, CapacityType: "reserved", Price: 0, Available: true, ReservationID: id, ReservationCapacity: 1,
		ReservationType: v1alpha1.CapacityReservationTypeDefault}
	if got := reservedOfferings(t, e); len(got) != 1 || got[0] != want {
		t.Fatalf("reserved offerings %+v, want only %+v", got, want)
	}
	claim, err := e.cp.Create(ctx(t), nodeClaim("first", []string{"m6i.large"}, []string{"reserved"}))
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if got := reservedOfferings(t, e); len(got) != 1 || got[0].Available || got[0].ReservationCapacity != 0 {
		t.Fatalf("after the launch: reserved offerings %+v, want the reservation full", got)
	}
	if err := e.cp.Delete(ctx(t), claim); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if err := e.cp.Refresh(ctx(t)); err != nil {
		t.Fatalf("Refresh: %v", err)
	}
	if got := reservedOfferings(t, e); len(got) != 1 || got[0] != want {
		t.Fatalf("after termination and refresh: reserved offerings %+v, want %+v", got, want)
	}
}

func reservedOfferings(t *testing.T, e *env) []cloudprovider.Offering {
	t.Helper()
	types, err := e.cp.InstanceTypes(ctx(t), nodePool("default"))
	if err != nil {
		t.Fatalf("listing instance types: %v", err)
	}
	var out []cloudprovider.Offering
	for _, it := range types {
		for _, o := range it.Offerings {
			if o.CapacityType == "reserved" {
				if it.Name != "m6i.large" {
					t.Errorf("reserved offering on %s", it.Name)
				}
				out = append(out, o)
			}
		}
	}
	return out
}

// TestNodeClassSelectsItsReservations: a NodeClass launches into the
// reservations its terms select and no others: none without terms, however
// many active reservations the account has; by id, tags, owner (a
// reservation shared from another account) and match criteria; an id that
// no longer exists selects nothing. The status lists what was selected.
func TestNodeClassSelectsItsReservations(t *testing.T) {
	e := newEnv(t, awsemu.SmallCatalogue(), 3)
	ml := addReservation(e, 2, map[string]string{"team": "ml"})
	web := addReservation(e, 2, map[string]string{"team": "web"})
	shared := e.emu.AddCapacityReservation(awsemu.CapacityReservation{InstanceType: "m6i.large", Zone: reservedZone, TotalInstanceCount: 1,
		InstanceMatchCriteria: awsemu.MatchOpen, OwnerID: "210987654321", Tags: map[string]string{"team": "ml"}})
	for _, tc := range []struct {
		name  string
		terms []v1alpha1.CapacityReservationSelectorTerm
		want  []string
	}{
		{"no terms select none", nil, nil},
		{"by id", []v1alpha1.CapacityReservationSelectorTerm{{ID: web}}, []string{web}},
		{"by tags, any owner", []v1alpha1.CapacityReservationSelectorTerm{{Tags: map[string]string{"team": "ml"}}}, []string{ml, shared}},
		{"by tags and owner", []v1alpha1.CapacityReservationSelectorTerm{{Tags: map[string]string{"team": "ml"}, OwnerID: "210987654321"}}, []string{shared}},
		{"by match criteria", []v1alpha1.CapacityReservationSelectorTerm{{InstanceMatchCriteria: "targeted"}}, []string{ml, web}},
		{"terms are ORed", []v1alpha1.CapacityReservationSelectorTerm{{ID: web}, {Tags: map[string]string{"team": "ml"}, InstanceMatchCriteria: "open"}}, []string{web, shared}},
		{"a reservation that no longer exists", []v1alpha1.CapacityReservationSelectorTerm{{ID: "cr-0000000000000000f"}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.nc = e.nc.DeepCopy()
			e.nc.Name = "class-" + strings.ReplaceAll(tc.name, " ", "-")
			e.nc.Spec.CapacityReservationSelectorTerms = tc.terms
			e.cp = e.newProvider(e.clients)
			st := e.cp.Status(ctx(t), e.nc)
			var listed []string
			for _, cr := range st.CapacityReservations {
				listed = append(listed, cr.ID)
			}
			var offered []string
			for _, o := range reservedOfferingsOf(t, e, e.nc.Name) {
				offered = append(offered, o.ReservationID)
			}
			slices.Sort(offered)
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if !slices.Equal(listed, want) || !slices.Equal(offered, want) {
				t.Errorf("status lists %v and reserved offerings are %v; want %v (ready: %+v)", listed, offered, want, st.Conditions)
			}
		})
	}
}

func reservedOfferingsOf(t *testing.T, e *env, class string) []cloudprovider.Offering {
	t.Helper()
	types, err := e.cp.InstanceTypes(ctx(t), nodePool(class))
	if err != nil {
		t.Fatalf("listing instance types: %v", err)
	}
	var out []cloudprovider.Offering
	for _, it := range types {
		for _, o := range it.Offerings {
			if o.CapacityType == "reserved" {
				out = append(out, o)
			}
		}
	}
	return out
}
