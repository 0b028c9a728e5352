package sdk_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/stowage-dev/stowage/controller/aws/sdk"
)

// TestReadOnlyClientsRefuseEveryWrite calls every method of the read-only
// clients whose name does not read (Describe, Get, List) on a client with
// nothing behind it: each must answer ErrDryRun itself. A write added to
// EC2API or IAMAPI without its refusal here would reach the nil client and
// fail this test, so that --dry-run can never change the account.
func TestReadOnlyClientsRefuseEveryWrite(t *testing.T) {
	refused := 0
	for _, client := range []any{sdk.ReadOnlyEC2{}, sdk.ReadOnlyIAM{}} {
		v := reflect.ValueOf(client)
		for i := range v.NumMethod() {
			m := v.Type().Method(i)
			if strings.HasPrefix(m.Name, "Describe") || strings.HasPrefix(m.Name, "Get") || strings.HasPrefix(m.Name, "List") {
				continue
			}
			t.Run(v.Type().Name()+"."+m.Name, func(t *testing.T) {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("%s reached the client behind the read-only one: %v", m.Name, r)
					}
				}()
				in := reflect.New(m.Type.In(2).Elem())
				out := v.Method(i).Call([]reflect.Value{reflect.ValueOf(context.Background()), in})
				if err, _ := out[1].Interface().(error); !errors.Is(err, sdk.ErrDryRun) {
					t.Errorf("%s returned %v, want ErrDryRun", m.Name, err)
				}
				refused++
			})
		}
	}
	if refused != 6 {
		t.Errorf("%d writes refused, want 6 (4 of EC2, 2 of IAM)", refused)
	}
}
