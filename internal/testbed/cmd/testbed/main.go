// Command testbed starts the whole-system bed (`make testbed`): the control
// plane with kube-scheduler, kube-controller-manager and kwok, the AWS
// emulator over HTTP, the bridge, and Stowage in process with the seed's
// pools applied. It prints a kubeconfig and the emulator's endpoint, then
// runs until interrupted.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stowage-dev/stowage/controller/logging"
	"github.com/stowage-dev/stowage/internal/awsemu"
	"github.com/stowage-dev/stowage/internal/testbed"
	"github.com/stowage-dev/stowage/internal/testenv"
)

func main() {
	seed := flag.String("seed", testbed.SeedFile, "snapshot whose NodePools and NodeClasses are applied")
	metrics := flag.String("metrics-bind-address", "127.0.0.1:8080", "Stowage's Prometheus metrics address")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *seed, *metrics, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "testbed: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, seed, metrics string, out io.Writer) (err error) {
	fmt.Fprintln(out, "starting the bed: etcd, kube-apiserver, kube-scheduler, kube-controller-manager, kwok, the AWS emulator")
	bed, err := testbed.Start(ctx, testbed.Options{InstanceTypes: awsemu.BuiltinCatalogue()})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, bed.Stop()) }()
	logPath := filepath.Join(bed.ControlPlane.Dir, "stowage.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logFile.Close()
	log := logging.New("stowage", "info", "json", logFile)
	ctrllog.SetLogger(logging.Logr(log.Named("runtime")))
	klog.SetLogger(logging.Logr(log.Named("client-go")))
	pools, err := bed.SeedPools(seed)
	if err != nil {
		return err
	}
	if err := bed.Create(ctx, pools...); err != nil {
		return err
	}
	op, err := bed.NewOperator(ctx, testbed.OperatorOptions{Logger: log, Flags: []string{"--metrics-bind-address=" + metrics}})
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- op.Start(ctx) }()
	printAccess(out, bed, seed, metrics, logPath)
	select {
	case err = <-done:
		return err
	case <-ctx.Done():
		fmt.Fprintln(out, "stopping")
		return <-done
	}
}

func printAccess(out io.Writer, bed *testbed.Bed, seed, metrics, logPath string) {
	kubectl := "kubectl"
	if cache, err := testenv.CacheDir(); err == nil {
		if p := filepath.Join(cache, "bin", "kubectl"); fileExists(p) {
			kubectl = p
		}
	}
	fmt.Fprintf(out, `
the bed is up, with the NodePools and NodeClasses of %s; Ctrl-C stops it.

  export KUBECONFIG=%s
  %s get nodepools,nodeclaims,nodes
  %s create deployment web --image=registry.invalid/app --replicas=20
  %s set resources deployment web --requests=cpu=1,memory=2Gi

  AWS emulator:  %s  (region %s, as its seeded administrator user)
    e.g. AWS_ENDPOINT_URL=%s AWS_ACCESS_KEY_ID=%s AWS_SECRET_ACCESS_KEY=%s aws ec2 describe-instances --region %s
  metrics:       http://%s/metrics
  Stowage logs:  %s
`, seed, bed.ControlPlane.KubeconfigPath, kubectl, kubectl, kubectl,
		bed.EmulatorURL, testbed.Region, bed.EmulatorURL, awsemu.DefaultAccessKeyID, awsemu.DefaultSecretAccessKey, testbed.Region, metrics, logPath)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
