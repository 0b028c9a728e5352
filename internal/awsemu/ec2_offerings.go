package awsemu

import (
	"sort"
	"strconv"
)

type xmlOffering struct {
	InstanceType string `xml:"instanceType"`
	LocationType string `xml:"locationType"`
	Location     string `xml:"location"`
}

type describeOfferingsResponse struct {
	ResponseMeta
	Offerings []xmlOffering `xml:"instanceTypeOfferingSet>item"`
	NextToken string        `xml:"nextToken,omitempty"`
}

// offeredLocked lists (type, zone) pairs that have a pool of any capacity type,
// sorted by type then zone.
func (e *Emulator) offeredLocked() [][2]string {
	seen := map[[2]string]bool{}
	for k := range e.pools {
		seen[[2]string{k.InstanceType, k.Zone}] = true
	}
	out := make([][2]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i][0] != out[j][0] {
			return out[i][0] < out[j][0]
		}
		return out[i][1] < out[j][1]
	})
	return out
}

func (e *Emulator) describeInstanceTypeOfferings(p params) (any, *APIError) {
	locType := p.str("LocationType")
	if locType == "" {
		locType = "region"
	}
	e.mu.Lock()
	pairs := e.offeredLocked()
	e.mu.Unlock()
	var matched []xmlOffering
	seen := map[string]bool{}
	for _, pair := range pairs {
		o := xmlOffering{InstanceType: pair[0], LocationType: locType, Location: e.location(locType, pair[1])}
		if seen[o.InstanceType+"/"+o.Location] || !offeringMatches(o, p.filters()) {
			continue
		}
		seen[o.InstanceType+"/"+o.Location] = true
		matched = append(matched, o)
	}
	from, to, next, err := page(p, len(matched), 5, 1000, 1000)
	if err != nil {
		return nil, err
	}
	return describeOfferingsResponse{ec2Resp("DescribeInstanceTypeOfferings"), matched[from:to], next}, nil
}

func (e *Emulator) location(locType, zone string) string {
	switch locType {
	case "availability-zone-id":
		return e.zoneID(zone)
	case "availability-zone":
		return zone
	default:
		return e.cfg.Region
	}
}

func offeringMatches(o xmlOffering, fs []filter) bool {
	for _, f := range fs {
		got := ""
		switch f.name {
		case "location":
			got = o.Location
		case "instance-type":
			got = o.InstanceType
		default:
			continue
		}
		if !matchValue(f.values, got) {
			return false
		}
	}
	return true
}

type xmlSpotPrice struct {
	InstanceType       string `xml:"instanceType"`
	ProductDescription string `xml:"productDescription"`
	SpotPrice          string `xml:"spotPrice"`
	Timestamp          string `xml:"timestamp"`
	AvailabilityZone   string `xml:"availabilityZone"`
	AvailabilityZoneID string `xml:"availabilityZoneId"`
}

type describeSpotPricesResponse struct {
	ResponseMeta
	Prices    []xmlSpotPrice `xml:"spotPriceHistorySet>item"`
	NextToken string         `xml:"nextToken,omitempty"`
}

// describeSpotPriceHistory reports the current spot price of every spot pool
// (the emulator keeps no history), for Linux/UNIX products.
func (e *Emulator) describeSpotPriceHistory(p params) (any, *APIError) {
	types, products := p.strings("InstanceType"), p.strings("ProductDescription")
	if len(products) > 0 && !matchValue(products, "Linux/UNIX") && !matchValue(products, "Linux/UNIX (Amazon VPC)") {
		return describeSpotPricesResponse{ResponseMeta: ec2Resp("DescribeSpotPriceHistory")}, nil
	}
	zone := p.str("AvailabilityZone")
	now := isoTime(e.clk.Now())
	var matched []xmlSpotPrice
	for _, k := range e.PoolKeys() {
		if k.CapacityType != CapacitySpot || (len(types) > 0 && !matchValue(types, k.InstanceType)) || (zone != "" && zone != k.Zone) {
			continue
		}
		pool, _ := e.Pool(k)
		sp := xmlSpotPrice{k.InstanceType, "Linux/UNIX", strconv.FormatFloat(pool.Price, 'f', 6, 64), now, k.Zone, e.zoneID(k.Zone)}
		if spotPriceMatches(sp, p.filters()) {
			matched = append(matched, sp)
		}
	}
	from, to, next, err := page(p, len(matched), 5, 1000, 1000)
	if err != nil {
		return nil, err
	}
	return describeSpotPricesResponse{ec2Resp("DescribeSpotPriceHistory"), matched[from:to], next}, nil
}

func spotPriceMatches(sp xmlSpotPrice, fs []filter) bool {
	for _, f := range fs {
		got := ""
		switch f.name {
		case "availability-zone":
			got = sp.AvailabilityZone
		case "instance-type":
			got = sp.InstanceType
		case "product-description":
			got = sp.ProductDescription
		default:
			continue
		}
		if !matchValue(f.values, got) {
			return false
		}
	}
	return true
}
