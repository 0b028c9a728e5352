package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/smithy-go"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// AWS returns the AWS configuration of the provider's settings, loaded once.
func (a *clusterAccess) AWS(ctx context.Context) (aws.Config, error) {
	a.awsOnce.Do(func() { a.awsCfg, a.awsErr = a.cfg.AWS.LoadAWS(ctx) })
	return a.awsCfg, a.awsErr
}

// awsBase is what every AWS-side resource shares: the provider's settings.
type awsBase struct{ access *clusterAccess }

func (b *awsBase) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	b.configure(req.ProviderData, &resp.Diagnostics)
}

func (b *awsBase) configure(data any, diags *diag.Diagnostics) {
	if data == nil {
		return
	}
	access, ok := data.(*clusterAccess)
	if !ok {
		diags.AddError("Unexpected provider data", fmt.Sprintf("got %T; please report this issue to the provider developers", data))
		return
	}
	b.access = access
}

// aws returns the AWS configuration, or adds a diagnostic saying how to set it.
func (b *awsBase) aws(ctx context.Context, diags *diag.Diagnostics) (aws.Config, bool) {
	if b.access == nil {
		diags.AddError("Provider not configured", "the stowage provider block was not configured; please report this issue to the provider developers")
		return aws.Config{}, false
	}
	cfg, err := b.access.AWS(ctx)
	if err != nil {
		diags.AddError("Loading the AWS configuration", err.Error()+"; set aws_region (and aws_profile or the AWS_* credentials) in the provider block")
		return aws.Config{}, false
	}
	return cfg, true
}

// awsDataSourceConfigure is Configure for data sources that may call AWS.
func (b *awsBase) configureDataSource(req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	b.configure(req.ProviderData, &resp.Diagnostics)
}

// errorCode is an AWS error's code, "" for any other error.
func errorCode(err error) string {
	var apiErr smithy.APIError
	if err != nil && errors.As(err, &apiErr) {
		return apiErr.ErrorCode()
	}
	return ""
}

// isNotFound reports the codes AWS answers for a resource that does not exist.
func isNotFound(err error) bool {
	switch errorCode(err) {
	case "NoSuchEntity", "ResourceNotFoundException", "AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist":
		return true
	}
	return false
}

// sameJSON reports whether two JSON documents hold the same value, whatever
// their white space and key order.
func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return strings.TrimSpace(a) == strings.TrimSpace(b)
	}
	return reflect.DeepEqual(x, y)
}

// stringMap reads a map(string) attribute; null is empty.
func stringMap(ctx context.Context, m types.Map, diags *diag.Diagnostics) map[string]string {
	out := map[string]string{}
	if m.IsNull() || m.IsUnknown() {
		return out
	}
	diags.Append(m.ElementsAs(ctx, &out, false)...)
	return out
}

// mapValue is a map(string) attribute read back: null when empty and like
// was null, so that an unset attribute stays unset and tags = {} stays {}.
func mapValue(m map[string]string, like types.Map) types.Map {
	if len(m) == 0 && like.IsNull() {
		return types.MapNull(types.StringType)
	}
	elems := map[string]types.String{}
	for k, v := range m {
		elems[k] = types.StringValue(v)
	}
	out, _ := types.MapValueFrom(context.Background(), types.StringType, elems)
	return out
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
