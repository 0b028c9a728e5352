package handler_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/hashicorp/go-hclog"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/stowage-dev/stowage/controller/apis/crds"
	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	lambdarbac "github.com/stowage-dev/stowage/controller/deploy/lambda"
	"github.com/stowage-dev/stowage/controller/interruption"
	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/internal/testbed"
	"github.com/stowage-dev/stowage/internal/testenv"
	"github.com/stowage-dev/stowage/lambda/config"
	"github.com/stowage-dev/stowage/lambda/handler"
	"github.com/stowage-dev/stowage/lambda/marker"
	"github.com/stowage-dev/stowage/lambda/messages"
	"github.com/stowage-dev/stowage/lambda/messages/registry"
)

const cluster = "identity"

// lambdaCredential is a session of the Lambda's role, as Lambda hands it
// the function.
var lambdaCredential = awsemu.Credential{AccessKeyID: "ASIALAMBDATEST", SecretAccessKey: "session-secret", SessionToken: "session-token",
	ARN: "arn:aws:sts::123456789012:assumed-role/" + testbed.LambdaRole + "/" + testbed.LambdaFunction, UserID: "AROALAMBDATEST:" + testbed.LambdaFunction}

// TestHandlerAsTheLambdaIdentity runs the handler as the Lambda does on
// EKS, on a real kube-apiserver: its client holds no kubeconfig, only EKS
// tokens minted from a session of its IAM role, which the token webhook
// verifies against the emulator's STS and maps to the group bound to
// controller/deploy/lambda's ClusterRole. Every sample in testdata is
// handled, and no request may be forbidden; the identity can do nothing
// else. One instance has a NodeClaim and no Node, as one still booting: its
// claim is marked instead.
func TestHandlerAsTheLambdaIdentity(t *testing.T) {
	rc, admin := lambdaCluster(t)
	ctx := context.Background()
	kube, err := client.New(rc, client.Options{Scheme: scheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	whoami(t, rc)
	var logs bytes.Buffer
	h := handler.New(registry.New(), marker.New(kube), clock.RealClock{}, handler.Config{Rebalance: handler.RebalanceMark},
		handler.Options{Logger: hclog.New(&hclog.LoggerOptions{Output: &logs, JSONFormat: true})})
	claim := bootingClaim(t, admin, booting)
	files, _ := filepath.Glob(filepath.Join(testdata, "*.json"))
	var bodies [][]byte
	wantFailed, wantMarked := 0, map[string]bool{}
	for _, path := range files {
		if strings.HasPrefix(filepath.Base(path), "sqs-") {
			continue
		}
		body := sample(t, filepath.Base(path))
		bodies = append(bodies, body)
		msg, err := registry.New().Parse(body)
		var fe *messages.FieldError
		if errors.As(err, &fe) {
			wantFailed++
		}
		for _, id := range msg.InstanceIDs {
			if id == booting {
				continue
			}
			if err := admin.Create(ctx, nodeFor(id)); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatal(err)
			}
			if msg.Kind != "" {
				wantMarked[nodeFor(id).Name] = true
			}
		}
	}
	failed := 0
	for start := 0; start < len(bodies); start += 10 {
		failed += len(h.HandleSQS(ctx, batch(bodies[start:min(start+10, len(bodies))]...)).BatchItemFailures)
	}
	if failed != wantFailed {
		t.Errorf("%d records failed, want the %d malformed ones:\n%s", failed, wantFailed, logs.String())
	}
	for name := range wantMarked {
		node := &corev1.Node{}
		if err := admin.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
			t.Fatal(err)
		}
		if _, ok := interruption.Marks(node); !ok {
			t.Errorf("node %s is not marked", name)
		}
	}
	if err := admin.Get(ctx, client.ObjectKeyFromObject(claim), claim); err != nil {
		t.Fatal(err)
	}
	if _, ok := interruption.Marks(claim); !ok {
		t.Errorf("nodeclaim %s of the instance without a Node is not marked", claim.Name)
	}
	if strings.Contains(strings.ToLower(logs.String()), "forbidden") {
		t.Errorf("a request was forbidden:\n%s", logs.String())
	}
	if err := kube.List(ctx, &corev1.PodList{}); !apierrors.IsForbidden(err) {
		t.Errorf("listing pods as the Lambda: %v, want forbidden", err)
	}
}

// booting is the instance of the samples that has no Node, only a NodeClaim.
const booting = "i-0b662ef9931388ba0"

// bootingClaim creates a launched NodeClaim of the instance.
func bootingClaim(t *testing.T, admin client.Client, instanceID string) *v1alpha1.NodeClaim {
	t.Helper()
	claim := &v1alpha1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "booting"}, Spec: v1alpha1.NodeClaimSpec{
		NodeClassRef: &v1alpha1.NodeClassReference{Group: v1alpha1.Group, Kind: v1alpha1.DefaultNodeClassKind, Name: "default"},
		Requirements: []v1alpha1.NodeSelectorRequirementWithMinValues{{Key: v1alpha1.LabelCapacityType,
			Operator: v1alpha1.OperatorIn, Values: []string{v1alpha1.CapacityTypeSpot}}}}}
	if err := admin.Create(context.Background(), claim); err != nil {
		t.Fatal(err)
	}
	claim.Status.ProviderID = "aws:///us-east-1a/" + instanceID
	if err := admin.Status().Update(context.Background(), claim); err != nil {
		t.Fatal(err)
	}
	return claim
}

// lambdaCluster starts kube-apiserver with the token webhook over the
// emulator's STS, installs the Lambda's RBAC, and returns the Lambda's
// client configuration (EKS tokens only) and an admin client.
func lambdaCluster(t *testing.T) (*rest.Config, client.Client) {
	t.Helper()
	emu := awsemu.New(awsemu.DefaultConfig())
	emu.AddCredential(lambdaCredential)
	srv := emu.Start()
	t.Cleanup(srv.Close)
	wh, err := testbed.StartTokenWebhook(t.TempDir(), cluster, clock.RealClock{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = wh.Close() })
	if err := wh.SetSTS(srv.URL); err != nil {
		t.Fatal(err)
	}
	wh.MapRole("arn:aws:iam::123456789012:role/"+testbed.LambdaRole, testbed.RoleMapping{Username: testbed.LambdaUser, Groups: []string{lambdarbac.Group}})
	cp := testenv.Start(t, testenv.Options{ExtraFlags: map[string][]string{testenv.KubeAPIServer: wh.Flags()}})
	admin, err := client.New(cp.Config, client.Options{Scheme: scheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	defs, err := crds.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := envtest.InstallCRDs(cp.Config, envtest.CRDInstallOptions{CRDs: defs}); err != nil {
		t.Fatalf("installing the CRDs: %v", err)
	}
	objs, err := lambdarbac.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if err := admin.Create(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := config.FromEnv(func(k string) string {
		return map[string]string{config.EnvClusterName: cluster, config.EnvClusterEndpoint: cp.APIServerURL,
			config.EnvClusterCA: base64.StdEncoding.EncodeToString(cp.Config.CAData)}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	awsCfg := aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider(lambdaCredential.AccessKeyID, lambdaCredential.SecretAccessKey, lambdaCredential.SessionToken)}
	rc, err := cfg.RESTConfig(context.Background(), awsCfg, clock.RealClock{})
	if err != nil {
		t.Fatal(err)
	}
	return rc, admin
}

// whoami checks the API server sees the Lambda's session as the mapped user.
func whoami(t *testing.T, rc *rest.Config) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("asking the API server who the Lambda is: %v", err)
	}
	user := review.Status.UserInfo
	if user.Username != "stowage-interruption-lambda:"+testbed.LambdaFunction || !contains(user.Groups, lambdarbac.Group) {
		t.Fatalf("the Lambda is %s in %v, want its mapped user in group %s", user.Username, user.Groups, lambdarbac.Group)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
