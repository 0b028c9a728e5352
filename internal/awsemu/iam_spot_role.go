package awsemu

import (
	"strings"
)

// The spot service-linked role: EC2 creates AWSServiceRoleForEC2Spot on an
// account's first spot launch, with the caller's permissions
// (iam:CreateServiceLinkedRole for spot.amazonaws.com); a caller that may
// not create it gets AuthFailure.ServiceLinkedRoleCreationNotPermitted for
// each spot launch, in an instant fleet's errors.
const (
	SpotServiceLinkedRole = "AWSServiceRoleForEC2Spot"
	spotService           = "spot.amazonaws.com"
	// CodeSpotRoleNotPermitted is EC2's code for a spot launch whose
	// service-linked role is missing and may not be created by the caller.
	CodeSpotRoleNotPermitted = "AuthFailure.ServiceLinkedRoleCreationNotPermitted"
	spotRoleNotPermitted     = "The provided credentials do not have permission to create the service-linked role for EC2 Spot Instances."
)

func (e *Emulator) spotRoleARN() string {
	return "arn:aws:iam::" + e.cfg.AccountID + ":role/aws-service-role/" + spotService + "/" + SpotServiceLinkedRole
}

// SpotServiceLinkedRoleExists reports whether the account has the role.
func (e *Emulator) SpotServiceLinkedRoleExists() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.iam.spotRole
}

// authzCreateServiceLinkedRole authorizes on the role the service names.
func (e *Emulator) authzCreateServiceLinkedRole(req request, action string) ([]authRequest, *policy) {
	service := req.form.str("AWSServiceName")
	arn := "arn:aws:iam::" + e.cfg.AccountID + ":role/aws-service-role/" + service + "/*"
	if service == spotService {
		arn = e.spotRoleARN()
	}
	return []authRequest{ar(action, arn, map[string][]string{"iam:awsservicename": {service}})}, nil
}

// iamCreateServiceLinkedRole creates the spot service-linked role; the
// emulator knows no other service's.
func (e *Emulator) iamCreateServiceLinkedRole(p params) (any, *APIError) {
	if service := p.str("AWSServiceName"); service != spotService {
		return nil, &APIError{"InvalidInput", "the emulator creates only the service-linked role of " + spotService + ", not " + service}
	}
	if e.iam.spotRole {
		return nil, &APIError{"InvalidInput", "Service role name " + SpotServiceLinkedRole + " has been taken in this account, please try a different suffix."}
	}
	e.iam.spotRole = true
	return e.spotRoleBody(), nil
}

func (e *Emulator) spotRoleBody() any {
	return struct {
		Role xmlRole `xml:"Role"`
	}{xmlRole{SpotServiceLinkedRole, "AROASPOTSERVICEROLE01", e.spotRoleARN(), "/aws-service-role/" + spotService + "/", isoTime(e.clk.Now())}}
}

// spotRoleLaunchesLocked adds, when the role is missing, what each spot
// launch of a fleet then also needs: the caller's permission to create it.
func (e *Emulator) spotRoleLaunchesLocked(s *authSet, market string, launch int) {
	if market == CapacitySpot && !e.iam.spotRole {
		s.addFor("iam:CreateServiceLinkedRole", e.spotRoleARN(), map[string][]string{"iam:awsservicename": {spotService}}, launch)
	}
}

// launchDenial is how EC2 reports a launch an authorization failed: the
// spot role's creation as its own code, any other as UnauthorizedOperation.
func launchDenial(ar authRequest, message string) FleetDenial {
	if ar.action == "iam:CreateServiceLinkedRole" && strings.HasSuffix(ar.resource, "/"+SpotServiceLinkedRole) {
		return FleetDenial{Code: CodeSpotRoleNotPermitted, Message: spotRoleNotPermitted}
	}
	return FleetDenial{Code: "UnauthorizedOperation", Message: message}
}

// FleetDenial is why IAM refused one launch of a fleet.
type FleetDenial struct{ Code, Message string }
