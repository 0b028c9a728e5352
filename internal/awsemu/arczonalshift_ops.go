package awsemu

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The ARC zonal shift operations that change or read one shift or one
// managed resource, as aws-sdk-go-v2/service/arczonalshift sends them:
// StartZonalShift (POST /zonalshifts), UpdateZonalShift and CancelZonalShift
// (PATCH and DELETE /zonalshifts/{zonalShiftId}), GetManagedResource (GET
// /managedresources/{resourceIdentifier}). The resources ARC manages here
// are the emulator's EKS clusters with zonal shift enabled.

// arcShiftInput is the JSON body of StartZonalShift and UpdateZonalShift.
type arcShiftInput struct {
	ResourceIdentifier *string `json:"resourceIdentifier"`
	AwayFrom           *string `json:"awayFrom"`
	ExpiresIn          *string `json:"expiresIn"`
	Comment            *string `json:"comment"`
}

// arcError is an ARC error with its HTTP status and, for a
// ValidationException or a ConflictException, its reason.
type arcError struct {
	status            int
	code, msg, reason string
	zonalShiftID      string
}

func validationError(reason, msg string) *arcError {
	return &arcError{status: http.StatusBadRequest, code: "ValidationException", msg: msg, reason: reason}
}

func notFoundError(msg string) *arcError {
	return &arcError{status: http.StatusNotFound, code: "ResourceNotFoundException", msg: msg}
}

func conflictError(reason, id, msg string) *arcError {
	return &arcError{status: http.StatusConflict, code: "ConflictException", msg: msg, reason: reason, zonalShiftID: id}
}

func writeARCError(w http.ResponseWriter, e *arcError) {
	body := map[string]string{"message": e.msg}
	if e.reason != "" {
		body["reason"] = e.reason
	}
	if e.zonalShiftID != "" {
		body["zonalShiftId"] = e.zonalShiftID
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", e.code)
	w.WriteHeader(e.status)
	out, _ := json.Marshal(body) //nolint:errchkjson // strings
	_, _ = w.Write(out)
}

// serveARCShift serves the operations on one shift or managed resource;
// false when the action is none of them.
func (e *Emulator) serveARCShift(w http.ResponseWriter, req request) bool {
	var out any
	var err *arcError
	status := http.StatusOK
	switch req.action {
	case "StartZonalShift":
		var in arcShiftInput
		if err = decodeARC(req.body, &in); err == nil {
			out, err = e.startZonalShift(in)
			status = http.StatusCreated
		}
	case "UpdateZonalShift":
		var in arcShiftInput
		if err = decodeARC(req.body, &in); err == nil {
			out, err = e.updateZonalShift(arcPathID(req.path), in)
		}
	case "CancelZonalShift":
		out, err = e.cancelZonalShift(arcPathID(req.path))
	case "GetManagedResource":
		out, err = e.getManagedResource(arcPathID(req.path))
	default:
		return false
	}
	if err != nil {
		writeARCError(w, err)
		return true
	}
	body, _ := json.Marshal(out) //nolint:errchkjson // maps of strings, numbers and lists
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
	return true
}

func decodeARC(body []byte, in *arcShiftInput) *arcError {
	if err := json.Unmarshal(body, in); err != nil {
		return &arcError{status: http.StatusBadRequest, code: "SerializationException", msg: err.Error()}
	}
	return nil
}

// arcPathID is the last segment of an escaped path, unescaped.
func arcPathID(path string) string {
	seg := path[strings.LastIndex(path, "/")+1:]
	id, err := url.PathUnescape(seg)
	if err != nil {
		return seg
	}
	return id
}

// expiresInPattern is ARC's format for a shift's length: whole minutes or hours.
var expiresInPattern = regexp.MustCompile(`^([1-9][0-9]*)([mh])$`)

// parseExpiresIn reads expiresIn: from one minute to three days, as ARC allows.
func parseExpiresIn(s string) (time.Duration, *arcError) {
	m := expiresInPattern.FindStringSubmatch(s)
	if m == nil {
		return 0, validationError("InvalidExpiresIn", "expiresIn "+strconv.Quote(s)+" must be a whole number followed by m (minutes) or h (hours), e.g. 30m or 2h")
	}
	n, _ := strconv.Atoi(m[1])
	d := time.Duration(n) * time.Minute
	if m[2] == "h" {
		d = time.Duration(n) * time.Hour
	}
	if d > 72*time.Hour {
		return 0, validationError("InvalidExpiresIn", "expiresIn "+s+" is longer than the 72h (3 days) a zonal shift may last")
	}
	return d, nil
}

// validateShiftStart checks StartZonalShift's fields, each required.
func (e *Emulator) validateShiftStart(in arcShiftInput) (time.Duration, *arcError) {
	fields := []struct {
		name  string
		value *string
	}{{"resourceIdentifier", in.ResourceIdentifier}, {"awayFrom", in.AwayFrom}, {"expiresIn", in.ExpiresIn}, {"comment", in.Comment}}
	for _, f := range fields {
		if f.value == nil {
			return 0, validationError("MissingValue", f.name+" is required")
		}
	}
	if len(*in.Comment) > 128 {
		return 0, validationError("", "1 validation error detected: Value at 'comment' failed to satisfy constraint: Member must have length less than or equal to 128")
	}
	if !e.zoneIDKnown(*in.AwayFrom) {
		return 0, validationError("InvalidAz", "awayFrom "+*in.AwayFrom+" is not an Availability Zone ID of "+e.cfg.Region)
	}
	return parseExpiresIn(*in.ExpiresIn)
}

func (e *Emulator) zoneIDKnown(id string) bool {
	for _, z := range e.cfg.Zones {
		if z.ID == id {
			return true
		}
	}
	return false
}

func (e *Emulator) startZonalShift(in arcShiftInput) (any, *arcError) {
	expiresIn, err := e.validateShiftStart(in)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	arn, ok := e.managedResourceLocked(*in.ResourceIdentifier)
	if !ok {
		return nil, notFoundError("resource " + *in.ResourceIdentifier + " is not a managed resource: enable zonal shift on the EKS cluster")
	}
	now := e.clk.Now()
	for _, s := range e.zonalShifts {
		if s.ResourceIdentifier == arn && s.status(now) == "ACTIVE" {
			return nil, conflictError("ZonalShiftAlreadyExists", s.ID, "zonal shift "+s.ID+" is already active for "+arn)
		}
	}
	n := len(e.zonalShifts) + 1
	s := ZonalShift{ID: fmt.Sprintf("%08x-0000-4000-8000-%012d", n, n), ResourceIdentifier: arn, AwayFrom: *in.AwayFrom,
		Comment: *in.Comment, Start: now, Expiry: now.Add(expiresIn)}
	e.zonalShifts = append(e.zonalShifts, s)
	return s.wire(now), nil
}

// activeShiftLocked finds the shift, and refuses one that is not active.
func (e *Emulator) activeShiftLocked(id string) (*ZonalShift, *arcError) {
	for i := range e.zonalShifts {
		if s := &e.zonalShifts[i]; s.ID == id {
			if s.status(e.clk.Now()) != "ACTIVE" {
				return nil, conflictError("ZonalShiftStatusNotActive", id, "zonal shift "+id+" is not active")
			}
			return s, nil
		}
	}
	return nil, notFoundError("no zonal shift " + id)
}

func (e *Emulator) updateZonalShift(id string, in arcShiftInput) (any, *arcError) {
	if in.Comment == nil && in.ExpiresIn == nil {
		return nil, validationError("MissingValue", "comment or expiresIn is required")
	}
	var expiresIn time.Duration
	if in.ExpiresIn != nil {
		var err *arcError
		if expiresIn, err = parseExpiresIn(*in.ExpiresIn); err != nil {
			return nil, err
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	s, err := e.activeShiftLocked(id)
	if err != nil {
		return nil, err
	}
	if in.Comment != nil {
		s.Comment = *in.Comment
	}
	if in.ExpiresIn != nil {
		s.Expiry = e.clk.Now().Add(expiresIn)
	}
	return s.wire(e.clk.Now()), nil
}

func (e *Emulator) cancelZonalShift(id string) (any, *arcError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s, err := e.activeShiftLocked(id)
	if err != nil {
		return nil, err
	}
	s.Canceled = true
	return s.wire(e.clk.Now()), nil
}

// wire is the shift as StartZonalShift, UpdateZonalShift and CancelZonalShift answer it.
func (s ZonalShift) wire(now time.Time) map[string]any {
	return map[string]any{"zonalShiftId": s.ID, "resourceIdentifier": s.ResourceIdentifier, "awayFrom": s.AwayFrom,
		"comment": s.Comment, "startTime": epochSeconds(s.Start), "expiryTime": epochSeconds(s.Expiry), "status": s.status(now)}
}
