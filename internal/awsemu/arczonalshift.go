package awsemu

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ZonalShift is an Amazon Application Recovery Controller zonal shift: one
// resource (an EKS cluster's ARN, a load balancer's) moved away from a zone,
// named by its zone ID (use1-az1), until it expires or is cancelled.
type ZonalShift struct {
	ID, ResourceIdentifier, AwayFrom, Comment string
	Start, Expiry                             time.Time
	Canceled                                  bool
}

// Autoshift is AWS's own shift, away from an impaired zone, of every
// resource enabled for zonal autoshift; End is zero while it is active.
type Autoshift struct {
	AwayFrom   string
	Start, End time.Time
}

// StartAutoshift starts an autoshift away from the zone (its ID); EndAutoshift completes it.
func (e *Emulator) StartAutoshift(awayFrom string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.autoshifts = append(e.autoshifts, Autoshift{AwayFrom: awayFrom, Start: e.clk.Now()})
}

// EndAutoshift completes the active autoshift away from the zone.
func (e *Emulator) EndAutoshift(awayFrom string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i := range e.autoshifts {
		if a := &e.autoshifts[i]; a.AwayFrom == awayFrom && a.End.IsZero() {
			a.End = e.clk.Now()
		}
	}
}

// zonalShiftStatus is the shift's status now: ACTIVE, EXPIRED or CANCELED.
func (s ZonalShift) status(now time.Time) string {
	switch {
	case s.Canceled:
		return "CANCELED"
	case now.Before(s.Expiry):
		return "ACTIVE"
	}
	return "EXPIRED"
}

// arcActions name the ARC zonal shift operations by method and path (an
// identifier's segment as {}): the service speaks JSON over REST.
var arcActions = map[string]string{
	"GET /zonalshifts": "ListZonalShifts", "GET /autoshifts": "ListAutoshifts", "POST /zonalshifts": "StartZonalShift",
	"PATCH /zonalshifts/{}": "UpdateZonalShift", "DELETE /zonalshifts/{}": "CancelZonalShift",
	"GET /managedresources/{}": "GetManagedResource",
}

// arcAction names the ARC zonal shift operation a request calls.
func arcAction(r *http.Request) string {
	path := strings.TrimSuffix(r.URL.EscapedPath(), "/")
	if parts := strings.Split(strings.TrimPrefix(path, "/"), "/"); len(parts) == 2 {
		path = "/" + parts[0] + "/{}"
	}
	if a, ok := arcActions[r.Method+" "+path]; ok {
		return a
	}
	return r.Method + " " + r.URL.Path
}

func (e *Emulator) serveARC(w http.ResponseWriter, req request) {
	q, err := url.ParseQuery(req.query)
	if err != nil {
		writeRESTError(w, http.StatusBadRequest, &APIError{"ValidationException", err.Error()})
		return
	}
	var items []any
	var apiErr *APIError
	switch req.action {
	case "ListZonalShifts":
		items, apiErr = e.listZonalShifts(q.Get("resourceIdentifier"), orDefault(q.Get("status"), "ACTIVE"))
	case "ListAutoshifts":
		items, apiErr = e.listAutoshifts(orDefault(q.Get("status"), "ACTIVE"))
	default:
		if e.serveARCShift(w, req) {
			return
		}
		apiErr = &APIError{"UnknownOperationException", "unknown ARC zonal shift operation " + req.action}
	}
	if apiErr != nil {
		writeRESTError(w, http.StatusBadRequest, apiErr)
		return
	}
	page, next, apiErr := paginate(items, q.Get("maxResults"), q.Get("nextToken"))
	if apiErr != nil {
		writeRESTError(w, http.StatusBadRequest, apiErr)
		return
	}
	out := map[string]any{"items": page}
	if next != "" {
		out["nextToken"] = next
	}
	writeJSON(w, "arc-zonal-shift", out)
}

// listZonalShifts answers ListZonalShifts: the shifts of the resource (every
// resource when empty) in the status, oldest first.
func (e *Emulator) listZonalShifts(resource, status string) ([]any, *APIError) {
	if !slices.Contains([]string{"ACTIVE", "EXPIRED", "CANCELED"}, status) {
		return nil, &APIError{"ValidationException", "1 validation error detected: Value '" + status +
			"' at 'status' failed to satisfy constraint: Member must satisfy enum value set: [ACTIVE, EXPIRED, CANCELED]"}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.clk.Now()
	var out []any
	for _, s := range e.zonalShifts {
		if (resource != "" && s.ResourceIdentifier != resource) || s.status(now) != status {
			continue
		}
		out = append(out, map[string]any{"zonalShiftId": s.ID, "resourceIdentifier": s.ResourceIdentifier, "awayFrom": s.AwayFrom,
			"comment": s.Comment, "startTime": epochSeconds(s.Start), "expiryTime": epochSeconds(s.Expiry), "status": status,
			"shiftType": "ZONAL_SHIFT"})
	}
	return out, nil
}

// listAutoshifts answers ListAutoshifts: the region's autoshifts in the status.
func (e *Emulator) listAutoshifts(status string) ([]any, *APIError) {
	if status != "ACTIVE" && status != "COMPLETED" {
		return nil, &APIError{"ValidationException", "1 validation error detected: Value '" + status +
			"' at 'status' failed to satisfy constraint: Member must satisfy enum value set: [ACTIVE, COMPLETED]"}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []any
	for _, a := range e.autoshifts {
		if (status == "ACTIVE") != a.End.IsZero() {
			continue
		}
		item := map[string]any{"awayFrom": a.AwayFrom, "startTime": epochSeconds(a.Start), "status": status}
		if !a.End.IsZero() {
			item["endTime"] = epochSeconds(a.End)
		}
		out = append(out, item)
	}
	return out, nil
}

// paginate cuts a page of at most maxResults (1 to 100, every item when
// empty) from the offset nextToken names.
func paginate(items []any, maxResults, nextToken string) ([]any, string, *APIError) {
	from, limit := 0, len(items)
	if nextToken != "" {
		n, err := strconv.Atoi(nextToken)
		if err != nil || n < 0 || n > len(items) {
			return nil, "", &APIError{"ValidationException", "invalid nextToken " + nextToken}
		}
		from = n
	}
	if maxResults != "" {
		n, err := strconv.Atoi(maxResults)
		if err != nil || n < 1 || n > 100 {
			return nil, "", &APIError{"ValidationException", "maxResults must be from 1 to 100"}
		}
		limit = n
	}
	to := min(from+limit, len(items))
	next := ""
	if to < len(items) {
		next = strconv.Itoa(to)
	}
	return items[from:to], next, nil
}

func epochSeconds(t time.Time) float64 { return float64(t.UnixMilli()) / 1000 }
