// The interruption Lambda: it reads AWS's interruption events from the SQS
// queue an EventBridge rule feeds (or one event invoked directly) and marks
// the affected Nodes for the interruption controller (docs/guides/interruption.md).
// main only wires: environment -> clients -> handler -> lambda.Start.
package main

import (
	"context"
	"fmt"
	"os"

	awslambda "github.com/aws/aws-lambda-go/lambda"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stowage-dev/stowage/controller/apis/v1alpha1"
	"github.com/stowage-dev/stowage/controller/logging"
	"github.com/stowage-dev/stowage/lambda/config"
	"github.com/stowage-dev/stowage/lambda/handler"
	"github.com/stowage-dev/stowage/lambda/marker"
	"github.com/stowage-dev/stowage/lambda/messages/registry"
)

// workers is how many records of a batch are marked at once: a batch is ten
// records at most, each a read and a write of one Node.
const workers = 10

func main() {
	h, err := build(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the interruption lambda:", err)
		os.Exit(1) // an init error: Lambda reports it and retries the invocation
	}
	awslambda.Start(h.Invoke)
}

func build(ctx context.Context) (*handler.Handler, error) {
	cfg, err := config.FromEnv(os.Getenv)
	if err != nil {
		return nil, err
	}
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("loading the AWS configuration: %w", err)
	}
	rc, err := cfg.RESTConfig(ctx, awsCfg, clock.RealClock{})
	if err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	kube, err := client.New(rc, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("building the Kubernetes client: %w", err)
	}
	log := logging.New("interruption-lambda", cfg.LogLevel, "json", os.Stdout)
	return handler.New(registry.New(), marker.New(kube), clock.RealClock{}, cfg.Handler(),
		handler.Options{Logger: log, Metrics: os.Stdout, Workers: workers}), nil
}
