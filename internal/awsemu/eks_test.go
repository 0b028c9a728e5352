package awsemu_test

import (
	"context"
	"encoding/base64"
	"errors"
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/stowage-dev/stowage/internal/awsemu"
)

func TestDescribeClusterThroughTheSDK(t *testing.T) {
	e := awsemu.New(awsemu.DefaultConfig())
	pem := []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
	e.AddEKSCluster(awsemu.EKSCluster{Name: "prod", Endpoint: "https://127.0.0.1:6443", CAData: pem, Version: "1.37"})
	c := eks.NewFromConfig(client(t, e))
	out, err := c.DescribeCluster(context.Background(), &eks.DescribeClusterInput{Name: awssdk.String("prod")})
	if err != nil {
		t.Fatal(err)
	}
	cl := out.Cluster
	if awssdk.ToString(cl.Endpoint) != "https://127.0.0.1:6443" || cl.Status != ekstypes.ClusterStatusActive || awssdk.ToString(cl.Version) != "1.37" {
		t.Errorf("cluster = endpoint %s status %s version %s", awssdk.ToString(cl.Endpoint), cl.Status, awssdk.ToString(cl.Version))
	}
	if got, _ := base64.StdEncoding.DecodeString(awssdk.ToString(cl.CertificateAuthority.Data)); string(got) != string(pem) {
		t.Errorf("certificate authority = %q, want the registered PEM", got)
	}
	if awssdk.ToString(cl.Arn) != "arn:aws:eks:us-east-1:123456789012:cluster/prod" {
		t.Errorf("arn = %s", awssdk.ToString(cl.Arn))
	}
	_, err = c.DescribeCluster(context.Background(), &eks.DescribeClusterInput{Name: awssdk.String("staging")})
	var nf *ekstypes.ResourceNotFoundException
	if !errors.As(err, &nf) {
		t.Fatalf("unknown cluster: error %v, want ResourceNotFoundException", err)
	}
	if e.Calls("DescribeCluster") != 2 {
		t.Errorf("DescribeCluster counted %d times, want 2", e.Calls("DescribeCluster"))
	}
}
