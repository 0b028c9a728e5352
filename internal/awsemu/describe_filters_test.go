package awsemu_test

import (
	"context"
	"slices"
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/stowage-dev/stowage/internal/awsemu"
)

// TestDescribeInstancesFiltersByTag: the tag:<key> and tag-key filters
// (Amazon EC2 API Reference, DescribeInstances), exact and with wildcards,
// and with the other filters.
func TestDescribeInstancesFiltersByTag(t *testing.T) {
	cfg := awsemu.DefaultConfig()
	cfg.PendingDelay, cfg.VisibilityDelay = 0, 0
	e := awsemu.New(cfg)
	w := newWorld(t, e) // its own instance has no tags
	a, b := w.launch(t, awsemu.CapacityOnDemand), w.launch(t, awsemu.CapacityOnDemand)
	c := ec2.NewFromConfig(client(t, e))
	ctx := context.Background()
	tag := func(id string, tags ...ec2types.Tag) {
		if _, err := c.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{id}, Tags: tags}); err != nil {
			t.Fatal(err)
		}
	}
	tag(a, ec2types.Tag{Key: awssdk.String("owner"), Value: awssdk.String("a")}, ec2types.Tag{Key: awssdk.String("pool"), Value: awssdk.String("x")})
	tag(b, ec2types.Tag{Key: awssdk.String("owner"), Value: awssdk.String("b")})
	f := func(name string, values ...string) ec2types.Filter {
		return ec2types.Filter{Name: awssdk.String(name), Values: values}
	}
	cases := []struct {
		name    string
		filters []ec2types.Filter
		want    []string
	}{
		{"an exact key", []ec2types.Filter{f("tag-key", "pool")}, []string{a}},
		{"any of two keys", []ec2types.Filter{f("tag-key", "nope", "owner")}, []string{a, b}},
		{"a key by wildcard", []ec2types.Filter{f("tag-key", "po*")}, []string{a}},
		{"a key no instance has", []ec2types.Filter{f("tag-key", "Owner")}, nil},
		{"a tag's value", []ec2types.Filter{f("tag:owner", "b")}, []string{b}},
		{"a tag's value by wildcard", []ec2types.Filter{f("tag:owner", "?")}, []string{a, b}},
		{"a key and a state", []ec2types.Filter{f("tag-key", "owner"), f("instance-state-name", "running")}, []string{a, b}},
		{"a key and another state", []ec2types.Filter{f("tag-key", "owner"), f("instance-state-name", "stopped")}, nil},
	}
	for _, tc := range cases {
		out, err := c.DescribeInstances(ctx, &ec2.DescribeInstancesInput{Filters: tc.filters})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var got []string
		for _, r := range out.Reservations {
			for _, in := range r.Instances {
				got = append(got, awssdk.ToString(in.InstanceId))
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
