package sdk_test

import (
	"reflect"
	"testing"

	"github.com/stowage-dev/stowage/controller/aws/sdk"
)

// TestPermissionsNameEveryMethodOfTheInterfaces keeps the list and the
// interfaces in step: each method is an action of its service's prefix, and
// every other action names the call AWS authorizes it on.
func TestPermissionsNameEveryMethodOfTheInterfaces(t *testing.T) {
	prefixes := map[string]reflect.Type{
		"ec2":             reflect.TypeFor[sdk.EC2API](),
		"ssm":             reflect.TypeFor[sdk.SSMAPI](),
		"pricing":         reflect.TypeFor[sdk.PricingAPI](),
		"iam":             reflect.TypeFor[sdk.IAMAPI](),
		"eks":             reflect.TypeFor[sdk.EKSAPI](),
		"arc-zonal-shift": reflect.TypeFor[sdk.ARCZonalShiftAPI](),
	}
	methods := map[string]bool{}
	for prefix, it := range prefixes {
		for i := range it.NumMethod() {
			methods[prefix+":"+it.Method(i).Name] = true
		}
	}
	listed := map[string]sdk.Permission{}
	for _, p := range sdk.Permissions {
		if _, dup := listed[p.Action]; dup {
			t.Errorf("%s is listed twice", p.Action)
		}
		listed[p.Action] = p
		switch {
		case p.Scope == "":
			t.Errorf("%s has no scope", p.Action)
		case p.On == "" && !methods[p.Action]:
			t.Errorf("%s is no method of the interfaces and names no call it is authorized on", p.Action)
		case p.On != "" && !methods[p.On]:
			t.Errorf("%s is authorized on %s, which is no method of the interfaces", p.Action, p.On)
		}
	}
	for m := range methods {
		if p, ok := listed[m]; !ok || p.On != "" {
			t.Errorf("the interfaces call %s, which the list does not grant as a call", m)
		}
	}
}
