// Package pricing keeps on-demand prices (Pricing API GetProducts, with the
// built-in catalogue as fallback) and spot prices (EC2 DescribeSpotPriceHistory).
package pricing

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	pricingtypes "github.com/aws/aws-sdk-go-v2/service/pricing/types"
	"github.com/hashicorp/go-hclog"
	"k8s.io/utils/clock"

	"github.com/stowage-dev/stowage/controller/aws/sdk"
	"github.com/stowage-dev/stowage/controller/catalogue"
)

// prices is one immutable snapshot; Provider swaps them atomically.
type prices struct {
	onDemand map[string]float64            // instance type -> USD/h
	spot     map[string]map[string]float64 // instance type -> zone -> USD/h
}

// Provider answers price questions from the last snapshot and never calls AWS
// on the read path.
type Provider struct {
	ec2     sdk.EC2API
	pricing sdk.PricingAPI
	region  string
	clk     clock.Clock
	log     hclog.Logger
	cur     atomic.Pointer[prices]
	version atomic.Uint64
}

// NewProvider starts with the built-in on-demand prices and no spot prices.
func NewProvider(ec2API sdk.EC2API, pricingAPI sdk.PricingAPI, region string, clk clock.Clock, log hclog.Logger) *Provider {
	p := &Provider{ec2: ec2API, pricing: pricingAPI, region: region, clk: clk, log: log}
	fallback := map[string]float64{}
	for _, info := range catalogue.Builtin() {
		fallback[info.Name] = info.OnDemandPrice
	}
	p.cur.Store(&prices{onDemand: fallback, spot: map[string]map[string]float64{}})
	return p
}

// OnDemand returns the on-demand price of a type.
func (p *Provider) OnDemand(instanceType string) (float64, bool) {
	v, ok := p.cur.Load().onDemand[instanceType]
	return v, ok
}

// Spot returns the spot price of a type in a zone.
func (p *Provider) Spot(instanceType, zone string) (float64, bool) {
	v, ok := p.cur.Load().spot[instanceType][zone]
	return v, ok
}

// Version changes every time the prices are replaced.
func (p *Provider) Version() uint64 { return p.version.Load() }

// Refresh fetches both price lists. A failing list keeps its previous prices;
// the error says which failed.
func (p *Provider) Refresh(ctx context.Context) error {
	old := p.cur.Load()
	next := &prices{onDemand: old.onDemand, spot: old.spot}
	od, odErr := p.fetchOnDemand(ctx)
	if odErr == nil {
		merged := make(map[string]float64, len(old.onDemand)+len(od))
		for k, v := range old.onDemand {
			merged[k] = v
		}
		for k, v := range od {
			merged[k] = v
		}
		next.onDemand = merged
	}
	spot, spotErr := p.fetchSpot(ctx)
	if spotErr == nil {
		next.spot = spot
	}
	p.cur.Store(next)
	p.version.Add(1)
	p.log.Debug("refreshed prices", "on_demand", len(next.onDemand), "spot_types", len(next.spot))
	if odErr != nil {
		return fmt.Errorf("refreshing on-demand prices: %w", odErr)
	}
	if spotErr != nil {
		return fmt.Errorf("refreshing spot prices: %w", spotErr)
	}
	return nil
}

func (p *Provider) fetchOnDemand(ctx context.Context) (map[string]float64, error) {
	in := &pricing.GetProductsInput{ServiceCode: aws.String("AmazonEC2"), Filters: []pricingtypes.Filter{
		termMatch("regionCode", p.region), termMatch("operatingSystem", "Linux"), termMatch("tenancy", "Shared"),
		termMatch("preInstalledSw", "NA"), termMatch("capacitystatus", "Used"),
	}}
	out := map[string]float64{}
	pager := pricing.NewGetProductsPaginator(p.pricing, in)
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("getting products: %w", err)
		}
		for _, doc := range page.PriceList {
			name, price, err := parsePriceDocument(doc)
			if err != nil {
				p.log.Warn("skipping price document", "error", err)
				continue
			}
			out[name] = price
		}
	}
	return out, nil
}

func termMatch(field, value string) pricingtypes.Filter {
	return pricingtypes.Filter{Field: aws.String(field), Type: pricingtypes.FilterTypeTermMatch, Value: aws.String(value)}
}

type priceDocument struct {
	Product struct {
		Attributes struct {
			InstanceType string `json:"instanceType"`
		} `json:"attributes"`
	} `json:"product"`
	Terms struct {
		OnDemand map[string]struct {
			PriceDimensions map[string]struct {
				PricePerUnit map[string]string `json:"pricePerUnit"`
			} `json:"priceDimensions"`
		} `json:"OnDemand"`
	} `json:"terms"`
}

// parsePriceDocument reads the instance type and its hourly USD price.
func parsePriceDocument(doc string) (string, float64, error) {
	var d priceDocument
	if err := json.Unmarshal([]byte(doc), &d); err != nil {
		return "", 0, fmt.Errorf("decoding price document: %w", err)
	}
	for _, term := range d.Terms.OnDemand {
		for _, dim := range term.PriceDimensions {
			price, err := strconv.ParseFloat(dim.PricePerUnit["USD"], 64)
			if err == nil && price > 0 && d.Product.Attributes.InstanceType != "" {
				return d.Product.Attributes.InstanceType, price, nil
			}
		}
	}
	return "", 0, fmt.Errorf("price document for %q has no positive USD price", d.Product.Attributes.InstanceType)
}

func (p *Provider) fetchSpot(ctx context.Context) (map[string]map[string]float64, error) {
	in := &ec2.DescribeSpotPriceHistoryInput{ProductDescriptions: []string{"Linux/UNIX"}, StartTime: aws.Time(p.clk.Now())}
	out := map[string]map[string]float64{}
	latest := map[[2]string]int64{}
	pager := ec2.NewDescribeSpotPriceHistoryPaginator(p.ec2, in)
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("describing spot price history: %w", err)
		}
		for _, sp := range page.SpotPriceHistory {
			addSpot(out, latest, sp)
		}
	}
	return out, nil
}

func addSpot(out map[string]map[string]float64, latest map[[2]string]int64, sp ec2types.SpotPrice) {
	price, err := strconv.ParseFloat(aws.ToString(sp.SpotPrice), 64)
	if err != nil || price <= 0 {
		return
	}
	it, zone := string(sp.InstanceType), aws.ToString(sp.AvailabilityZone)
	key, ts := [2]string{it, zone}, aws.ToTime(sp.Timestamp).UnixNano()
	if prev, ok := latest[key]; ok && prev > ts {
		return
	}
	latest[key] = ts
	if out[it] == nil {
		out[it] = map[string]float64{}
	}
	out[it][zone] = price
}
