# Shared by the scripts/bench-*.sh; sourced, not run. First what drives a running ecsd with ecsctl.

# wait_for_ecsd ECSCTL PORT: until ecsd answers a ping (5 s at most).
wait_for_ecsd() {
  for _ in $(seq 100); do
    "$1" -p "$2" ping >/dev/null 2>&1 && return 0
    sleep 0.05
  done
  echo "$(basename "$0"): no ecsd answers on port $2" >&2
  return 1
}

# spawn_movers ECSCTL PORT COUNT COMPONENTS: defines the prefab `mover` with COMPONENTS (a JSON
# object) and spawns COUNT of it in the default world, 100,000 per world.spawn_prefab call.
spawn_movers() {
  local ecsctl=$1 port=$2 left=$3 n
  "$ecsctl" -p "$port" -t 60 call world.define_prefab "{\"name\":\"mover\",\"components\":$4}" >/dev/null
  while [[ $left -gt 0 ]]; do
    n=$((left > 100000 ? 100000 : left))
    "$ecsctl" -p "$port" -t 60 call world.spawn_prefab "{\"name\":\"mover\",\"count\":$n}" >/dev/null
    left=$((left - n))
  done
}

# The anchors (scripts/bench-vs-entt.sh, scripts/bench-vs-flecs.sh): ecs_bench beside the same work
# done by another ECS, pinned to one core.
# anchor_args FLAG "$@": reads FLAG DIR, --build-dir DIR and --repetitions N into anchor_dir,
# build_dir (build/release) and reps (3).
anchor_args() {
  local flag=$1
  shift
  anchor_dir="" build_dir=build/release reps=3
  while [[ $# -gt 0 ]]; do
    case "$1" in
      "$flag") anchor_dir="$2"; shift 2 ;;
      --build-dir) build_dir="$2"; shift 2 ;;
      --repetitions) reps="$2"; shift 2 ;;
      *) echo "usage: $0 $flag DIR [--build-dir DIR] [--repetitions N]" >&2; exit 2 ;;
    esac
  done
}

# compare_with_anchor NAME LABEL ANCHOR_BINARY CASE...: runs ecs_bench's CASEs (a Release build in
# build_dir, made if missing) and ANCHOR_BINARY's NAME/CASEs, reps repetitions each on the last core,
# and prints the medians side by side with ecsd/LABEL. Their output goes beside ANCHOR_BINARY (the
# caller's temporary folder, which it removes).
compare_with_anchor() {
  local name=$1 label=$2 anchor=$3
  shift 3
  if [[ ! -x "$build_dir/bin/ecs_bench" ]]; then
    cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$build_dir" --target ecs_bench
  fi
  local out core filter
  out=$(dirname "$anchor")
  core=$(( $(nproc) - 1 ))
  filter="^($(IFS='|'; echo "$*"))/"
  local args=(--benchmark_repetitions="$reps" --benchmark_report_aggregates_only=true --benchmark_format=json)
  taskset -c "$core" "$build_dir/bin/ecs_bench" --benchmark_filter="$filter" "${args[@]}" 2>/dev/null >"$out/ecsd.json"
  taskset -c "$core" "$anchor" --benchmark_filter="$name/" "${args[@]}" 2>/dev/null >"$out/anchor.json"
  python3 - "$out/ecsd.json" "$out/anchor.json" "$name" "$label" "$@" <<'PY'
import json, sys
ecsd_path, anchor_path, name, label, cases = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
def medians(path):
    # JSON, not CSV: Google Benchmark's CSV reporter aborts when cases print different counters.
    rows = {}
    for b in json.load(open(path))["benchmarks"]:
        case = b["run_name"].removeprefix(name + "/").partition("/")[0]
        if b["run_type"] == "iteration" or b.get("aggregate_name") == "median":  # one repetition, or the median
            rows[case] = float(b["real_time"])
    return rows
ecsd, anchor = medians(ecsd_path), medians(anchor_path)
print(f"{'case (1M entities)':<20}{'ecsd ms':>10}{label + ' ms':>10}{'ecsd/' + label:>12}")
for case in cases:
    a, b = ecsd.get(case), anchor.get(case)
    if a is None or b is None:
        print(f"{case:<20}{'missing':>10}"); continue
    print(f"{case:<20}{a:>10.2f}{b:>10.2f}{a / b:>11.2f}x")
PY
}
