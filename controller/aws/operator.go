package aws

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/arczonalshift"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/stowage-dev/stowage/controller/aws/sdk"
)

// Clients are the AWS APIs the cloud provider uses.
type Clients struct {
	EC2     sdk.EC2API
	SSM     sdk.SSMAPI
	Pricing sdk.PricingAPI
	IAM     sdk.IAMAPI
	EKS     sdk.EKSAPI
	// ARC reads zonal shifts; nil turns zonal shift awareness off.
	ARC sdk.ARCZonalShiftAPI
}

// pricingRegion is where the Pricing API answers for every region.
const pricingRegion = "us-east-1"

// LoadClients builds real clients from the standard credential chain (so IRSA
// and EKS Pod Identity work), in adaptive retry mode, honouring the
// AWS_ENDPOINT_URL_* variables.
func LoadClients(ctx context.Context, region string, opts ...func(*config.LoadOptions) error) (Clients, error) {
	opts = append([]func(*config.LoadOptions) error{config.WithRegion(region), config.WithRetryMode(aws.RetryModeAdaptive)}, opts...)
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return Clients{}, fmt.Errorf("loading AWS configuration: %w", err)
	}
	return ClientsFromConfig(cfg), nil
}

// ClientsFromConfig builds every client from one configuration.
func ClientsFromConfig(cfg aws.Config) Clients {
	return Clients{
		EC2:     ec2.NewFromConfig(cfg),
		SSM:     ssm.NewFromConfig(cfg),
		Pricing: pricing.NewFromConfig(cfg, func(o *pricing.Options) { o.Region = pricingRegion }),
		IAM:     iam.NewFromConfig(cfg),
		EKS:     eks.NewFromConfig(cfg),
		ARC:     arczonalshift.NewFromConfig(cfg),
	}
}
