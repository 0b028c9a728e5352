package testenv

import (
	"testing"
	"time"
)

func TestHandoversJudgeEachChangeOfHolder(t *testing.T) {
	at := func(s float64) time.Time { return time.Unix(1000, 0).Add(time.Duration(s * float64(time.Second))) }
	held := func(holder string, acquire, renew float64) LeaseState {
		return LeaseState{Holder: holder, Acquire: at(acquire), Renew: at(renew), Duration: 4 * time.Second}
	}
	released := func(when float64) LeaseState {
		return LeaseState{Acquire: at(when), Renew: at(when), Duration: time.Second}
	}
	cases := []struct {
		name   string
		states []LeaseState
		want   []Handover
	}{
		{"renewals alone are no handover", []LeaseState{held("a", 0, 0), held("a", 0, 1), held("a", 0, 2)}, nil},
		{"an expired lease taken after its term", []LeaseState{held("a", 0, 0), held("a", 0, 2), held("b", 6.5, 6.5)},
			[]Handover{{From: "a", To: "b", Gap: 4500 * time.Millisecond}}},
		{"a lease taken inside its term is early", []LeaseState{held("a", 0, 2), held("b", 4.5, 4.5)},
			[]Handover{{From: "a", To: "b", Gap: 2500 * time.Millisecond, Early: true}}},
		{"a lease taken within the second candidates cannot see is not early", []LeaseState{held("a", 0, 1.2), held("a", 0, 1.7), held("b", 5.2, 5.2)},
			[]Handover{{From: "a", To: "b", Gap: 3500 * time.Millisecond}}},
		{"a released lease may be taken at once", []LeaseState{held("a", 0, 2), released(2.5), held("b", 2.75, 2.75)},
			[]Handover{{From: "a", To: "b", Released: true, Gap: 250 * time.Millisecond}}},
		{"the old holder taking back its released lease is no handover", []LeaseState{held("a", 0, 2), released(2.5), held("a", 3, 3), held("b", 4, 4)},
			[]Handover{{From: "a", To: "b", Gap: time.Second, Early: true}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := &LeaseHistory{states: tc.states}
			got := h.Handovers()
			if len(got) != len(tc.want) {
				t.Fatalf("handovers %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("handover %d is %+v, want %+v", i, got[i], tc.want[i])
				}
			}
			if err := h.Exclusive(); (err != nil) != (len(tc.want) > 0 && tc.want[len(tc.want)-1].Early) {
				t.Errorf("Exclusive() = %v", err)
			}
		})
	}
}
