#!/usr/bin/env bash
# ecs_bench and the same work done by EnTT, in one run, pinned to one core: ratios travel between
# machines, absolute figures do not. EnTT is not a Debian package, so bring a checkout yourself
# (git clone https://github.com/skypjack/entt) and never commit it.
#   scripts/bench-vs-entt.sh --entt ../entt                  Release ecs_bench from build/release
#   scripts/bench-vs-entt.sh --entt ../entt --repetitions 5 --build-dir build/release
set -euo pipefail
cd "$(dirname "$0")/.."

entt=""
build_dir=build/release
reps=3
while [[ $# -gt 0 ]]; do
  case "$1" in
    --entt) entt="$2"; shift 2 ;;
    --build-dir) build_dir="$2"; shift 2 ;;
    --repetitions) reps="$2"; shift 2 ;;
    *) echo "usage: scripts/bench-vs-entt.sh --entt DIR [--build-dir DIR] [--repetitions N]" >&2; exit 2 ;;
  esac
done
[[ -f "$entt/single_include/entt/entt.hpp" ]] || {
  echo "bench-vs-entt: give --entt the root of an EnTT checkout (single_include/entt/entt.hpp)" >&2
  exit 2
}
if [[ ! -x "$build_dir/bin/ecs_bench" ]]; then
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build_dir" --target ecs_bench
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
g++ -std=c++20 -O3 -DNDEBUG -I"$entt/single_include" tests/bench/anchors/entt_bench.cpp -o "$out/entt_bench" \
  -lbenchmark -lpthread
core=$(( $(nproc) - 1 ))
filter='^(create|update_view|add_remove|destroy_each|destroy)/'
args=(--benchmark_repetitions="$reps" --benchmark_report_aggregates_only=true --benchmark_format=json)
taskset -c "$core" "$build_dir/bin/ecs_bench" --benchmark_filter="$filter" "${args[@]}" 2>/dev/null >"$out/ecsd.json"
taskset -c "$core" "$out/entt_bench" --benchmark_filter='entt/' "${args[@]}" 2>/dev/null >"$out/entt.json"
python3 - "$out/ecsd.json" "$out/entt.json" <<'PY'
import json, sys
def medians(path):
    # JSON, not CSV: Google Benchmark's CSV reporter aborts when cases print different counters.
    rows = {}
    for b in json.load(open(path))["benchmarks"]:
        case = b["run_name"].removeprefix("entt/").partition("/")[0]
        if b["run_type"] == "iteration" or b.get("aggregate_name") == "median":  # one repetition, or the median
            rows[case] = float(b["real_time"])
    return rows
ecsd, entt = medians(sys.argv[1]), medians(sys.argv[2])
print(f"{'case (1M entities)':<20}{'ecsd ms':>10}{'EnTT ms':>10}{'ecsd/EnTT':>11}")
for case in ("create", "update_view", "add_remove", "destroy_each", "destroy"):
    a, b = ecsd.get(case), entt.get(case)
    if a is None or b is None:
        print(f"{case:<20}{'missing':>10}"); continue
    print(f"{case:<20}{a:>10.2f}{b:>10.2f}{a / b:>10.2f}x")
PY
