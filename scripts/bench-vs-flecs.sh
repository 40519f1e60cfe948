#!/usr/bin/env bash
# ecs_bench and the same work done by flecs, in one run, pinned to one core: ratios travel between
# machines, absolute figures do not. flecs is not a Debian package, so bring a checkout yourself
# (git clone https://github.com/SanderMertens/flecs) and never commit it. Compiling flecs.c takes
# about 30 s.
#   scripts/bench-vs-flecs.sh --flecs ../flecs                 Release ecs_bench from build/release
#   scripts/bench-vs-flecs.sh --flecs ../flecs --repetitions 5 --build-dir build/release
set -euo pipefail
cd "$(dirname "$0")/.."

flecs=""
build_dir=build/release
reps=3
while [[ $# -gt 0 ]]; do
  case "$1" in
    --flecs) flecs="$2"; shift 2 ;;
    --build-dir) build_dir="$2"; shift 2 ;;
    --repetitions) reps="$2"; shift 2 ;;
    *) echo "usage: scripts/bench-vs-flecs.sh --flecs DIR [--build-dir DIR] [--repetitions N]" >&2; exit 2 ;;
  esac
done
[[ -f "$flecs/distr/flecs.c" && -f "$flecs/distr/flecs.h" ]] || {
  echo "bench-vs-flecs: give --flecs the root of a flecs checkout (distr/flecs.c and distr/flecs.h)" >&2
  exit 2
}
if [[ ! -x "$build_dir/bin/ecs_bench" ]]; then
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build_dir" --target ecs_bench
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
gcc -O3 -DNDEBUG -c "$flecs/distr/flecs.c" -o "$out/flecs.o"
g++ -std=c++20 -O3 -DNDEBUG -I"$flecs/distr" tests/bench/anchors/flecs_bench.cpp "$out/flecs.o" \
  -o "$out/flecs_bench" -lbenchmark -lpthread
core=$(( $(nproc) - 1 ))
args=(--benchmark_repetitions="$reps" --benchmark_report_aggregates_only=true --benchmark_format=json)
taskset -c "$core" "$build_dir/bin/ecs_bench" --benchmark_filter='^(create|update_view|destroy_each|destroy)/' \
  "${args[@]}" 2>/dev/null >"$out/ecsd.json"
taskset -c "$core" "$out/flecs_bench" --benchmark_filter='flecs/' "${args[@]}" 2>/dev/null >"$out/flecs.json"
python3 - "$out/ecsd.json" "$out/flecs.json" <<'PY'
import json, sys
def medians(path):
    # JSON, not CSV: Google Benchmark's CSV reporter aborts when cases print different counters.
    rows = {}
    for b in json.load(open(path))["benchmarks"]:
        case = b["run_name"].removeprefix("flecs/").partition("/")[0]
        if b["run_type"] == "iteration" or b.get("aggregate_name") == "median":  # one repetition, or the median
            rows[case] = float(b["real_time"])
    return rows
ecsd, flecs = medians(sys.argv[1]), medians(sys.argv[2])
print(f"{'case (1M entities)':<20}{'ecsd ms':>10}{'flecs ms':>10}{'ecsd/flecs':>12}")
for case in ("create", "update_view", "destroy_each", "destroy"):
    a, b = ecsd.get(case), flecs.get(case)
    if a is None or b is None:
        print(f"{case:<20}{'missing':>10}"); continue
    print(f"{case:<20}{a:>10.2f}{b:>10.2f}{a / b:>11.2f}x")
PY
