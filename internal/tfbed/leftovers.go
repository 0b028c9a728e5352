package tfbed

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/internal/testbed"
)

// Snapshot is every object the cluster holds, as "resource.group
// namespace/name", events aside (they age out by themselves).
type Snapshot map[string]bool

// Objects takes a snapshot of the cluster, through discovery: every
// resource that can be listed.
func (e *Env) Objects(ctx context.Context) (Snapshot, error) {
	cfg := rest.CopyConfig(e.Bed.ControlPlane.Config)
	cfg.WarningHandler = rest.NoWarnings{} // deprecated kinds are listed too
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	lists, err := dc.ServerPreferredResources()
	if err != nil {
		return nil, fmt.Errorf("discovering the cluster's resources: %w", err)
	}
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	out := Snapshot{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			return nil, err
		}
		for _, r := range l.APIResources {
			if !slices.Contains(r.Verbs, "list") || strings.Contains(r.Name, "/") || r.Name == "events" {
				continue
			}
			objs, err := mc.Resource(gv.WithResource(r.Name)).List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, fmt.Errorf("listing %s: %w", r.Name, err)
			}
			for _, o := range objs.Items {
				out[r.Name+"."+gv.Group+" "+o.Namespace+"/"+o.Name] = true
			}
		}
	}
	return out, nil
}

// Added lists, sorted, the objects of now that before does not hold.
func (before Snapshot) Added(now Snapshot) []string {
	var out []string
	for k := range now {
		if !before[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// Leftovers lists what the emulator holds that a configuration made and its
// destroy should have removed: roles (the bed's own aside), instance
// profiles, queues, log groups, functions, event source mappings, rules,
// launch templates, Pod Identity associations, access entries, and
// instances that are not terminated or terminating.
func (e *Env) Leftovers(ctx context.Context) ([]string, error) {
	emu := e.Bed.Emulator
	var out []string
	add := func(kind string, names []string) {
		for _, n := range names {
			out = append(out, kind+" "+n)
		}
	}
	add("role", slices.DeleteFunc(emu.Roles(), func(r string) bool { return r == NodeRole }))
	add("instance profile", emu.InstanceProfiles())
	add("queue", emu.Queues())
	add("log group", emu.LogGroups())
	add("function", emu.Functions())
	add("event source mapping", emu.EventSourceMappings())
	add("rule", emu.Rules())
	for _, lt := range emu.LaunchTemplates() {
		add("launch template", []string{lt.Name})
	}
	for _, a := range emu.PodIdentityAssociations() {
		add("pod identity association", []string{a.Namespace + "/" + a.ServiceAccount})
	}
	for _, in := range emu.Instances() {
		if in.State != awsemu.StateTerminated && in.State != awsemu.StateShuttingDown {
			add("instance", []string{in.ID + " (" + in.State + ")"})
		}
	}
	entries, err := e.accessEntries(ctx)
	if err != nil {
		return nil, err
	}
	add("access entry", entries)
	return out, nil
}

// accessEntries lists the cluster's access entries through the real SDK.
func (e *Env) accessEntries(ctx context.Context) ([]string, error) {
	client := eks.New(eks.Options{Region: testbed.Region, BaseEndpoint: aws.String(e.Bed.EmulatorURL),
		Credentials: credentials.NewStaticCredentialsProvider(awsemu.DefaultAccessKeyID, awsemu.DefaultSecretAccessKey, "")})
	var out []string
	pager := eks.NewListAccessEntriesPaginator(client, &eks.ListAccessEntriesInput{ClusterName: aws.String(e.Bed.Cluster)})
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing the access entries: %w", err)
		}
		out = append(out, page.AccessEntries...)
	}
	return out, nil
}
