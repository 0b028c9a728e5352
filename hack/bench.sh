#!/usr/bin/env bash
# Runs the scheduling benchmarks on the public workloads (../shared/bench/WORKLOADS.md)
# and prints one BENCH line per case. Extra arguments go to `go test`.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp)
trap 'rm -f "$out"' EXIT
status=0
go test -run '^$' -bench BenchmarkSolve -benchtime 1x -timeout 60m "$@" ./controller/provisioning/scheduler/ >"$out" 2>&1 || status=$?
grep '^BENCH ' "$out" || true
if [ "$status" -ne 0 ]; then
	grep -v '^BENCH ' "$out" | grep -E -- '--- FAIL|checker found|FAIL|^\s+scheduler_benchmark_test.go' | head -60 >&2 || true
	exit "$status"
fi
