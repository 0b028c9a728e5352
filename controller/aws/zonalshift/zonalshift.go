// Package zonalshift reads, from Amazon Application Recovery Controller, the
// zones the cluster is shifted away from: the cluster's own zonal shifts
// (started by an operator, or by a practice run) and the active autoshifts
// (AWS's own shift away from a zone it finds impaired) that apply to it: those
// of its managed resource, while its zonal autoshift is enabled. Launches
// avoid those zones until the shift expires, is cancelled or completes.
package zonalshift

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/arczonalshift"
	arctypes "github.com/aws/aws-sdk-go-v2/service/arczonalshift/types"
	"k8s.io/utils/clock"

	"github.com/stowage-dev/stowage/controller/aws/sdk"
)

// Shift is one reason to avoid a zone, named by its zone ID (use1-az1), as
// ARC names zones: the same ID is the same physical zone in every account.
type Shift struct {
	ZoneID string
	// Reason says which shift: "zonal shift <id> (<comment>)" or "autoshift".
	Reason string
	// Expiry is when a zonal shift ends by itself; zero for an autoshift,
	// which lasts until AWS completes it.
	Expiry time.Time
}

// Provider keeps the shifts of the last Refresh.
type Provider struct {
	api      sdk.ARCZonalShiftAPI
	resource string
	clk      clock.Clock
	mu       sync.RWMutex
	shifts   []Shift
}

// NewProvider reads the shifts of resource (the EKS cluster's ARN).
func NewProvider(api sdk.ARCZonalShiftAPI, resource string, clk clock.Clock) *Provider {
	return &Provider{api: api, resource: resource, clk: clk}
}

// Refresh lists the cluster's active zonal shifts and reads the autoshifts
// that apply to it; on an error it keeps the previous ones.
func (p *Provider) Refresh(ctx context.Context) error {
	var shifts []Shift
	zonal := arczonalshift.NewListZonalShiftsPaginator(p.api, &arczonalshift.ListZonalShiftsInput{
		ResourceIdentifier: awssdk.String(p.resource), Status: arctypes.ZonalShiftStatusActive})
	for zonal.HasMorePages() {
		page, err := zonal.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("listing the zonal shifts of %s: %w", p.resource, err)
		}
		for _, s := range page.Items {
			reason := "zonal shift " + awssdk.ToString(s.ZonalShiftId)
			if c := awssdk.ToString(s.Comment); c != "" {
				reason += " (" + c + ")"
			}
			shifts = append(shifts, Shift{ZoneID: awssdk.ToString(s.AwayFrom), Reason: reason, Expiry: awssdk.ToTime(s.ExpiryTime)})
		}
	}
	auto, err := p.autoshifts(ctx)
	if err != nil {
		return err
	}
	shifts = append(shifts, auto...)
	p.mu.Lock()
	p.shifts = shifts
	p.mu.Unlock()
	return nil
}

// autoshifts are the active autoshifts ARC applies to the cluster: those of
// its managed resource, which lists them only while the cluster's zonal
// autoshift is enabled; none when ARC does not manage the cluster (zonal
// shift is not enabled on it).
func (p *Provider) autoshifts(ctx context.Context) ([]Shift, error) {
	r, err := p.api.GetManagedResource(ctx, &arczonalshift.GetManagedResourceInput{ResourceIdentifier: awssdk.String(p.resource)})
	var notManaged *arctypes.ResourceNotFoundException
	if errors.As(err, &notManaged) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s as ARC manages it: %w", p.resource, err)
	}
	if r.ZonalAutoshiftStatus != arctypes.ZonalAutoshiftStatusEnabled {
		return nil, nil
	}
	var out []Shift
	for _, a := range r.Autoshifts {
		out = append(out, Shift{ZoneID: awssdk.ToString(a.AwayFrom), Reason: "autoshift"})
	}
	return out, nil
}

// Active returns the shifted zones by zone ID, now on the clock: a zonal
// shift whose expiry has passed since the last Refresh no longer counts.
func (p *Provider) Active() map[string]Shift {
	if p == nil {
		return nil
	}
	now := p.clk.Now()
	p.mu.RLock()
	defer p.mu.RUnlock()
	out := map[string]Shift{}
	for _, s := range p.shifts {
		if s.Expiry.IsZero() || now.Before(s.Expiry) {
			if _, seen := out[s.ZoneID]; !seen {
				out[s.ZoneID] = s
			}
		}
	}
	return out
}

// Zones lists the shifted zone IDs, sorted.
func Zones(active map[string]Shift) []string { return slices.Sorted(maps.Keys(active)) }
