package tfbed

import (
	"bytes"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
)

// Fleet is what one CreateFleet call, made over TLS (as the controller
// makes them), came to: the overrides EC2 refused, and the types it
// launched.
type Fleet struct {
	// Errors are the refused overrides: their instance type, zone and code
	// (InsufficientInstanceCapacity for a shortage).
	Errors []FleetError
	// Launched are the instance types of the instances it launched.
	Launched []string
}

// FleetError is one override a fleet could not launch.
type FleetError struct{ InstanceType, Zone, Code string }

// fleets records the CreateFleet answers the TLS server gives.
type fleets struct {
	mu  sync.Mutex
	all []Fleet
}

// Fleets returns every CreateFleet answer so far, oldest first.
func (e *Env) Fleets() []Fleet {
	e.fleets.mu.Lock()
	defer e.fleets.mu.Unlock()
	return append([]Fleet(nil), e.fleets.all...)
}

// record wraps the emulator's handler: a CreateFleet's answer is read as
// the SDK would, and kept.
func (f *fleets) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if form, err := url.ParseQuery(string(body)); err != nil || form.Get("Action") != "CreateFleet" {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
		f.add(rec.Body.Bytes())
	})
}

type fleetOverrides struct {
	InstanceType string `xml:"instanceType"`
	Zone         string `xml:"availabilityZone"`
}

func (f *fleets) add(answer []byte) {
	var doc struct {
		Errors []struct {
			Overrides fleetOverrides `xml:"launchTemplateAndOverrides>overrides"`
			Code      string         `xml:"errorCode"`
		} `xml:"errorSet>item"`
		Instances []struct {
			InstanceType string   `xml:"instanceType"`
			IDs          []string `xml:"instanceIds>item"`
		} `xml:"fleetInstanceSet>item"`
	}
	if xml.Unmarshal(answer, &doc) != nil {
		return // an error answer: no fleet
	}
	var out Fleet
	for _, e := range doc.Errors {
		out.Errors = append(out.Errors, FleetError{InstanceType: e.Overrides.InstanceType, Zone: e.Overrides.Zone, Code: e.Code})
	}
	for _, in := range doc.Instances {
		for range in.IDs {
			out.Launched = append(out.Launched, in.InstanceType)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.all = append(f.all, out)
}
