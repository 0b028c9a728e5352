package awsemu

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

type pricingFilter struct {
	Field string `json:"Field"`
	Type  string `json:"Type"`
	Value string `json:"Value"`
}

type getProductsInput struct {
	ServiceCode string          `json:"ServiceCode"`
	Filters     []pricingFilter `json:"Filters"`
	NextToken   string          `json:"NextToken"`
	MaxResults  int             `json:"MaxResults"`
}

type getProductsOutput struct {
	FormatVersion string   `json:"FormatVersion"`
	PriceList     []string `json:"PriceList"`
	NextToken     string   `json:"NextToken,omitempty"`
}

var regionNames = map[string]string{
	"us-east-1": "US East (N. Virginia)", "us-east-2": "US East (Ohio)", "us-west-2": "US West (Oregon)", "eu-west-1": "EU (Ireland)",
}

func (e *Emulator) servePricing(w http.ResponseWriter, req request) {
	if req.action != "GetProducts" {
		writeJSONError(w, "pricing", http.StatusBadRequest, "InvalidAction", "unknown Pricing action "+req.action)
		return
	}
	jsonCall(w, req, e.getProducts)
}

// getProducts serves the on-demand Linux shared-tenancy price of every type,
// in the AWS price-list document shape (product attributes and OnDemand terms).
func (e *Emulator) getProducts(in getProductsInput) (any, *APIError) {
	if in.ServiceCode != "AmazonEC2" {
		return getProductsOutput{FormatVersion: "aws_v1"}, nil
	}
	var docs []string
	for _, t := range e.InstanceTypes() {
		attrs := e.productAttributes(t)
		if !productMatches(attrs, in.Filters) {
			continue
		}
		doc, err := priceDocument(t, attrs)
		if err != nil {
			return nil, &APIError{"InternalErrorException", err.Error()}
		}
		docs = append(docs, doc)
	}
	limit := in.MaxResults
	if limit <= 0 || limit > 100 {
		limit = 100
	}
	from := 0
	if in.NextToken != "" {
		off, err := strconv.Atoi(strings.TrimPrefix(in.NextToken, "page-"))
		if err != nil || off < 0 || off > len(docs) {
			return nil, &APIError{"InvalidNextTokenException", "The next token is invalid"}
		}
		from = off
	}
	to := min(from+limit, len(docs))
	out := getProductsOutput{FormatVersion: "aws_v1", PriceList: docs[from:to]}
	if to < len(docs) {
		out.NextToken = fmt.Sprintf("page-%d", to)
	}
	return out, nil
}

func (e *Emulator) productAttributes(t InstanceTypeSpec) map[string]string {
	return map[string]string{
		"instanceType": t.Name, "regionCode": e.cfg.Region, "location": regionNames[e.cfg.Region],
		"operatingSystem": "Linux", "tenancy": "Shared", "preInstalledSw": "NA", "capacitystatus": "Used",
		"licenseModel": "No License required", "marketoption": "OnDemand", "servicecode": "AmazonEC2",
		"vcpu": strconv.Itoa(int(t.VCPU)), "memory": fmt.Sprintf("%g GiB", float64(t.MemoryMiB)/1024),
	}
}

func productMatches(attrs map[string]string, fs []pricingFilter) bool {
	for _, f := range fs {
		got, ok := attrs[f.Field]
		if !ok {
			return false
		}
		switch f.Type {
		case "CONTAINS":
			ok = strings.Contains(got, f.Value)
		case "ANY_OF", "NONE_OF":
			ok = false
			for _, v := range strings.Split(f.Value, ",") {
				ok = ok || got == strings.TrimSpace(v)
			}
			ok = ok == (f.Type == "ANY_OF")
		default: // TERM_MATCH, EQUALS
			ok = got == f.Value
		}
		if !ok {
			return false
		}
	}
	return true
}

func priceDocument(t InstanceTypeSpec, attrs map[string]string) (string, error) {
	sku := strings.ToUpper(strings.NewReplacer(".", "", "-", "").Replace(t.Name)) + "SKU"
	term := sku + ".JRTCKXETXF"
	doc := map[string]any{
		"serviceCode": "AmazonEC2", "version": "20260701000000", "publicationDate": "2026-07-01T00:00:00Z",
		"product": map[string]any{"productFamily": "Compute Instance", "sku": sku, "attributes": attrs},
		"terms": map[string]any{"OnDemand": map[string]any{term: map[string]any{
			"sku": sku, "offerTermCode": "JRTCKXETXF", "effectiveDate": "2026-07-01T00:00:00Z",
			"priceDimensions": map[string]any{term + ".6YS6EN2CT7": map[string]any{
				"unit": "Hrs", "description": fmt.Sprintf("$%.4f per On Demand Linux %s Instance Hour", t.OnDemandPrice, t.Name),
				"pricePerUnit": map[string]string{"USD": strconv.FormatFloat(t.OnDemandPrice, 'f', 10, 64)},
			}},
		}}},
	}
	out, err := json.Marshal(doc)
	return string(out), err
}
