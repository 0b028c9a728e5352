#!/usr/bin/env bash
# bench.sh runs every benchmark in BENCHMARKS below, prints the BENCH lines
# they print, and exits non-zero, naming the benchmark, when one fails, skips
# or does not print a BENCH line it promises. `make bench` runs it after
# `make tools`.
#
#   hack/bench.sh [go test flags]            every benchmark; the flags go to every `go test`
#   BENCH_ONLY=Launch hack/bench.sh          only the entries whose package or -bench matches
#   BENCH_SET=soak hack/bench.sh             the long cases of SOAK_BENCHMARKS instead (make soak)
#
# The workloads are in ../shared/bench/WORKLOADS.md.
set -euo pipefail
cd "$(dirname "$0")/.."

# One entry per benchmark: add yours as one more entry.
#   package | -bench regexp | -benchtime | -timeout | the BENCH lines it must print, separated by ";"
# A regexp naming a Test (^Test...) runs that test instead, for a figure a
# test measures on its way (its -benchtime is "-").
# An expected line lists a BENCH line's identifying fields ("BENCH workload=W1
# catalogue=C1 pods=1000"): some printed BENCH line must hold every one of
# them, in any order. An entry may span lines. Its -bench regexp cannot hold
# "|", which separates the fields: one entry a case.
BENCHMARKS=(
	"./controller/provisioning/scheduler/ | ^BenchmarkSolve$ | 1x | 60m |
		BENCH workload=W1 catalogue=C1 pods=1000; BENCH workload=W1 catalogue=C1 pods=5000;
		BENCH workload=W1 catalogue=C1 pods=50000; BENCH workload=W1 catalogue=C1 pods=150000; BENCH workload=W1 catalogue=C2 pods=1000;
		BENCH workload=W1 catalogue=C2 pods=5000; BENCH workload=W3 preferences=respect;
		BENCH workload=W3 preferences=ignore; BENCH workload=W3 preferences=cost-aware"
	"./controller/aws/ | ^BenchmarkLaunch$ | 200x | 15m | BENCH cloud=launch"
	"./controller/e2e/ | ^BenchmarkPodToRunning$ | 1x | 15m | BENCH e2e=pod-to-running"
	"./controller/e2e/ | ^BenchmarkUnschedulableToCreateFleet$ | 1x | 15m | BENCH e2e=unschedulable-to-createfleet"
	"./controller/e2e/ | ^BenchmarkLeaderFailover$ | 1x | 15m | BENCH e2e=failover mode=crash; BENCH e2e=failover mode=graceful"
	"./controller/e2e/ | ^BenchmarkInterruptionLambdaMark$ | 1x | 20m | BENCH lambda=mark"
	"./controller/disruption/ | ^BenchmarkConsolidation$/^nodes=2000$ | 1x | 20m | BENCH disruption=consolidation nodes=2000"
	"./controller/disruption/ | ^BenchmarkConsolidation$/^nodes=10000$ | 1x | 20m | BENCH disruption=consolidation nodes=10000"
	"./controller/simulate/ | ^BenchmarkSimulateDay$/^day-10k$ | 1x | 30m | BENCH simulate=day-10k"
	"./controller/simulate/ | ^BenchmarkSimulatePriorities$ | 1x | 30m | BENCH simulate=priorities"
	"./controller/simulate/ | ^BenchmarkSimulateZoneOutage$/^zone-outage-300$ | 1x | 30m | BENCH simulate=zone-outage pods=3000"
	"./controller/simulate/ | ^BenchmarkSimulateZoneOutage$/^zone-outage-3k$ | 1x | 60m | BENCH simulate=zone-outage pods=30000"
	"./controller/e2e/ | ^TestChaosSoak$ | - | 15m | BENCH chaos=soak"
	"./internal/headtohead/ | ^BenchmarkHeadToHead$ | 1x | 150m |
		BENCH headtohead=basic/scale-out system=karpenter; BENCH headtohead=basic/scale-out system=stowage; BENCH headtohead=basic/scale-in system=karpenter; BENCH headtohead=basic/scale-in system=stowage;
		BENCH headtohead=hostname-spread/scale-out system=karpenter; BENCH headtohead=hostname-spread/scale-out system=stowage; BENCH headtohead=hostname-spread/scale-in system=karpenter; BENCH headtohead=hostname-spread/scale-in system=stowage;
		BENCH headtohead=hostname-spread-xl/scale-out system=karpenter; BENCH headtohead=hostname-spread-xl/scale-out system=stowage; BENCH headtohead=hostname-spread-xl/scale-in system=karpenter; BENCH headtohead=hostname-spread-xl/scale-in system=stowage;
		BENCH headtohead=interference/scale-out system=karpenter; BENCH headtohead=interference/scale-out system=stowage; BENCH headtohead=interference/interference system=karpenter; BENCH headtohead=interference/interference system=stowage; BENCH headtohead=interference/scale-in system=karpenter; BENCH headtohead=interference/scale-in system=stowage;
		BENCH headtohead=do-not-disrupt/scale-out system=karpenter; BENCH headtohead=do-not-disrupt/scale-out system=stowage; BENCH headtohead=do-not-disrupt/scale-in system=karpenter; BENCH headtohead=do-not-disrupt/scale-in system=stowage;
		BENCH headtohead=wide-deployments/scale-out system=karpenter; BENCH headtohead=wide-deployments/scale-out system=stowage; BENCH headtohead=wide-deployments/scale-in system=karpenter; BENCH headtohead=wide-deployments/scale-in system=stowage;
		BENCH headtohead=drift/scale-out system=karpenter; BENCH headtohead=drift/scale-out system=stowage; BENCH headtohead=drift/drift system=karpenter; BENCH headtohead=drift/drift system=stowage;
		BENCH headtohead=machine"
)

# The scale envelope's long cases, which `make soak` runs (BENCH_SET=soak):
# a simulated day at 10,000 nodes and 150,000 pods, a lost zone at 9,000
# nodes and 90,000 pods, one consolidation round over 30,000 nodes, the bed
# stepped up until a stop rule holds, and one of the bed's three zones lost
# under a few dozen nodes. A machine
# that cannot afford the whole day replays its first hours:
# `go test -run '^$' -bench '^BenchmarkSimulateDay$/^day-150k$' -benchtime 1x -timeout 600m ./controller/simulate/ -args -simulate.hours=2`.
SOAK_BENCHMARKS=(
	"./controller/simulate/ | ^BenchmarkSimulateDay$/^day-150k$ | 1x | 600m | BENCH simulate=day-150k"
	"./controller/simulate/ | ^BenchmarkSimulateZoneOutage$/^zone-outage-9k$ | 1x | 300m | BENCH simulate=zone-outage"
	"./controller/disruption/ | ^BenchmarkConsolidation$/^nodes=30000$ | 1x | 60m | BENCH disruption=consolidation nodes=30000"
	"./controller/e2e/ | ^BenchmarkBedEnvelope$ | 1x | 600m | BENCH bed=envelope-limit"
	"./controller/e2e/ | ^BenchmarkBedZoneOutage$ | 1x | 40m | BENCH e2e=zone-outage"
)

# trim prints $1 with its runs of white space made single spaces and its ends stripped.
trim() { printf '%s' "$1" | tr -s ' \t\n' '   ' | sed 's/^ //; s/ $//'; }

# holds reports whether the BENCH line $1 has every field of the expected line $2.
holds() {
	local field
	for field in $2; do
		[[ " $1 " == *" $field "* ]] || return 1
	done
}

# run_entry runs one entry and prints its BENCH lines; it returns non-zero,
# after saying why on stderr, when the benchmark failed, skipped or left an
# expected line unprinted. Extra arguments go to `go test`.
run_entry() {
	local entry="$1" pkg regexp benchtime timeout expected out lines want line ok status=0
	shift
	IFS='|' read -r pkg regexp benchtime timeout expected <<<"$(trim "$entry")"
	pkg="$(trim "$pkg")" regexp="$(trim "$regexp")" benchtime="$(trim "$benchtime")" timeout="$(trim "$timeout")"
	local name="${regexp//[\^\$]/} ($pkg)"
	out="$(mktemp)"
	if [[ "$regexp" == ^Test* ]]; then
		go test -v -count=1 -run "$regexp" -timeout "$timeout" "$@" "$pkg" >"$out" 2>&1 || status=$?
	else
		go test -v -run '^$' -bench "$regexp" -benchtime "$benchtime" -timeout "$timeout" "$@" "$pkg" >"$out" 2>&1 || status=$?
	fi
	lines="$(grep -o 'BENCH .*' "$out" || true)" # a line may follow the benchmark's name
	[[ -z "$lines" ]] || printf '%s\n' "$lines"
	local problems=()
	((status == 0)) || problems+=("go test exited with status $status")
	grep -q -- '--- SKIP' "$out" && problems+=("it skipped")
	grep -q -- '--- FAIL' "$out" && problems+=("it failed")
	IFS=';' read -ra wants <<<"$expected"
	for want in "${wants[@]}"; do
		want="$(trim "$want")"
		[[ -n "$want" ]] || continue
		ok=no
		while IFS= read -r line; do
			if holds "$line" "$want"; then ok=yes; break; fi
		done <<<"$lines"
		[[ $ok == yes ]] || problems+=("it printed no '$want' line")
	done
	if ((${#problems[@]})); then
		{
			printf 'make bench: %s:' "$name"
			printf ' %s;' "${problems[@]}"
			printf '\n'
			grep -v 'BENCH ' "$out" | grep -E -A3 -- '--- (FAIL|SKIP)|^FAIL|panic:|_test\.go:[0-9]+:' | head -60 || true
		} >&2
		rm -f "$out"
		return 1
	fi
	rm -f "$out"
}

main() {
	local entry failed=() entries=("${BENCHMARKS[@]}")
	[[ "${BENCH_SET:-}" != soak ]] || entries=("${SOAK_BENCHMARKS[@]}")
	for entry in "${entries[@]}"; do
		if [[ -n "${BENCH_ONLY:-}" ]] && ! grep -qE -- "$BENCH_ONLY" <<<"$(trim "$entry" | cut -d'|' -f1,2)"; then
			continue
		fi
		run_entry "$entry" "$@" || failed+=("$(trim "$entry" | cut -d'|' -f2 | tr -d ' ^$')")
	done
	if ((${#failed[@]})); then
		printf 'make bench: %d benchmark(s) did not deliver: %s\n' "${#failed[@]}" "${failed[*]}" >&2
		exit 1
	fi
}

main "$@"
