#!/usr/bin/env bash
# Runs the scheduling benchmarks on the public workloads (../shared/bench/WORKLOADS.md),
# the AWS launch benchmark against the emulator, the whole-bed benchmarks
# (controller/e2e: pod-to-running, and unschedulable-to-CreateFleet with the
# seed's pools), one consolidation decision over 2,000 thin nodes, and the
# day-long simulation, and prints one BENCH line per case.
# Extra arguments go to every `go test` run.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp)
trap 'rm -f "$out"' EXIT
status=0
go test -run '^$' -bench BenchmarkSolve -benchtime 1x -timeout 60m "$@" ./controller/provisioning/scheduler/ >"$out" 2>&1 || status=$?
go test -run '^$' -bench BenchmarkLaunch -benchtime 200x -timeout 15m "$@" ./controller/aws/ >>"$out" 2>&1 || status=$?
go test -run '^$' -bench 'BenchmarkPodToRunning|BenchmarkUnschedulableToCreateFleet' -benchtime 1x -timeout 15m "$@" ./controller/e2e/ >>"$out" 2>&1 || status=$?
go test -run '^$' -bench BenchmarkConsolidation -benchtime 1x -timeout 15m "$@" ./controller/disruption/ >>"$out" 2>&1 || status=$?
go test -run '^$' -bench BenchmarkSimulateDay -benchtime 1x -timeout 30m "$@" ./controller/simulate/ >>"$out" 2>&1 || status=$?
grep -o 'BENCH .*' "$out" || true # a line may follow the benchmark's name
grep -A1 -- '--- SKIP' "$out" >&2 || true # e.g. the bed's binaries are not built: run make tools
if [ "$status" -ne 0 ]; then
	grep -v 'BENCH ' "$out" | grep -E -- '--- FAIL|checker found|FAIL|^\s+(scheduler_benchmark|bench|bed|createfleet_benchmark|launch_benchmark|simulate_benchmark|consolidation_benchmark)_test.go' | head -60 >&2 || true
	exit "$status"
fi
