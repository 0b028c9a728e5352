package awsemu

import (
	"encoding/json"
	"strings"
)

// managedResourceLocked resolves a resource identifier to the ARN of a
// resource ARC manages: an EKS cluster of the emulator whose zonal shift is
// enabled (EKSCluster.ZonalShift).
func (e *Emulator) managedResourceLocked(identifier string) (string, bool) {
	c, ok := e.clusterByARNLocked(identifier)
	if !ok || !c.ZonalShift {
		return "", false
	}
	return identifier, true
}

// clusterByARNLocked finds the EKS cluster an ARN names.
func (e *Emulator) clusterByARNLocked(arn string) (EKSCluster, bool) {
	prefix := "arn:aws:eks:" + e.cfg.Region + ":" + e.cfg.AccountID + ":cluster/"
	name, ok := strings.CutPrefix(arn, prefix)
	if !ok {
		return EKSCluster{}, false
	}
	c, ok := e.eksClusters[name]
	return c, ok
}

// getManagedResource answers GetManagedResource: the resource's active
// zonal shifts and, when its zonal autoshift is enabled, the region's active
// autoshifts, each APPLIED unless a zonal shift of the resource, which
// takes precedence, is active; and each zone's share of the traffic.
func (e *Emulator) getManagedResource(identifier string) (any, *arcError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	arn, ok := e.managedResourceLocked(identifier)
	if !ok {
		return nil, notFoundError("resource " + identifier + " is not a managed resource: enable zonal shift on the EKS cluster")
	}
	c, _ := e.clusterByARNLocked(arn)
	now := e.clk.Now()
	weights := map[string]float64{}
	for _, z := range e.cfg.Zones {
		weights[z.ID] = 1
	}
	shifts := []any{}
	for _, s := range e.zonalShifts {
		if s.ResourceIdentifier == arn && s.status(now) == "ACTIVE" {
			weights[s.AwayFrom] = 0
			shifts = append(shifts, map[string]any{"zonalShiftId": s.ID, "resourceIdentifier": arn, "awayFrom": s.AwayFrom,
				"comment": s.Comment, "startTime": epochSeconds(s.Start), "expiryTime": epochSeconds(s.Expiry),
				"appliedStatus": "APPLIED", "shiftType": "ZONAL_SHIFT"})
		}
	}
	autoshifts, status := []any{}, "DISABLED"
	if c.ZonalAutoshift {
		status = "ENABLED"
		for _, a := range e.autoshifts {
			if !a.End.IsZero() {
				continue
			}
			applied := "APPLIED"
			if len(shifts) > 0 {
				applied = "NOT_APPLIED"
			} else {
				weights[a.AwayFrom] = 0
			}
			autoshifts = append(autoshifts, map[string]any{"awayFrom": a.AwayFrom, "startTime": epochSeconds(a.Start), "appliedStatus": applied})
		}
	}
	return map[string]any{"arn": arn, "name": c.Name, "appliedWeights": weights, "zonalShifts": shifts,
		"autoshifts": autoshifts, "zonalAutoshiftStatus": status}, nil
}

// authzARC authorizes an ARC call that names a managed resource (directly,
// or through the zonal shift it names) with the resource's identifier in
// arc-zonal-shift:ResourceIdentifier: on the load balancer's ARN, or on "*"
// for an EKS cluster, whose type the Service Authorization Reference does
// not list (ARC's IAM guide scopes such calls with the key instead). The
// list calls take no resource.
func (e *Emulator) authzARC(req request, action string) ([]authRequest, *policy) {
	var identifier string
	switch action {
	case "arc-zonal-shift:StartZonalShift":
		var in arcShiftInput
		if json.Unmarshal(req.body, &in) == nil && in.ResourceIdentifier != nil {
			identifier = *in.ResourceIdentifier
		}
	case "arc-zonal-shift:UpdateZonalShift", "arc-zonal-shift:CancelZonalShift":
		identifier = e.shiftResource(arcPathID(req.path))
	case "arc-zonal-shift:GetManagedResource":
		identifier = arcPathID(req.path)
	}
	if identifier == "" {
		return []authRequest{ar(action, "*", map[string][]string{})}, nil
	}
	resource := "*"
	if strings.HasPrefix(identifier, "arn:aws:elasticloadbalancing:") {
		resource = identifier
	}
	return []authRequest{ar(action, resource, map[string][]string{"arc-zonal-shift:resourceidentifier": {identifier}})}, nil
}

// shiftResource is the resource of the zonal shift; "" for none.
func (e *Emulator) shiftResource(id string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, s := range e.zonalShifts {
		if s.ID == id {
			return s.ResourceIdentifier
		}
	}
	return ""
}
