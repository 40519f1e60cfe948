#!/usr/bin/env bash
# The world while it autosaves, through the server (issue 16): ecsd with --data-dir and
# --autosave 1 hosts a world of N movers (default 1M, Position+Velocity, spawned with
# world.spawn_prefab) ticking at 60 Hz; over --seconds it counts the ticks run, the ticks skipped,
# the overruns and the saves, and reads ecsd's RSS per entity (the lowest and highest of ten
# samples over a last second). Give --ecsd more than once to compare binaries (say the previous
# commit's and this one's) in one run: ratios travel, absolute figures do not.
#   scripts/bench-autosave.sh                                   build/release's ecsd, 1M movers, 6 s
#   scripts/bench-autosave.sh --ecsd /tmp/prev/build/release/bin/ecsd --ecsd build/release/bin/ecsd
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench-lib.sh

binaries=()
entities=1000000
seconds=6
ecsctl=build/release/bin/ecsctl
while [[ $# -gt 0 ]]; do
  case "$1" in
    --ecsd) binaries+=("$2"); shift 2 ;;
    --entities) entities="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --ecsctl) ecsctl="$2"; shift 2 ;;
    *) echo "usage: scripts/bench-autosave.sh [--ecsd PATH]... [--entities N] [--seconds S] [--ecsctl PATH]" >&2
       exit 2 ;;
  esac
done
[[ ${#binaries[@]} -gt 0 ]] || binaries=(build/release/bin/ecsd)

work=$(mktemp -d)
pid=""
cleanup() {
  [[ -n "$pid" ]] && kill -9 "$pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
# ecsd's own page faults (minflt, /proc/PID/stat field 10): copy-on-write after a fork shows here.
faults() { sed 's/.*) //' "/proc/$1/stat" | awk '{print $8}'; }
field() { jq -r ".$1"; }

printf '| %-40s | %6s | %5s | %7s | %8s | %5s | %14s | %9s | %9s | %8s | %8s | %7s | %16s |\n' ecsd ticks want skipped overruns \
  saves "fork p50/max" "fork CPU" "copy max" "tick p50" "tick p99" "faults" "RSS/entity lo/hi"
printf '|%s|\n' "------------------------------------------|--------|-------|---------|----------|-------|----------------|-----------|-----------|----------|----------|---------|------------------"
port=7871
for bin in "${binaries[@]}"; do
  data="$work/data$port"
  mkdir -p "$data"
  "$bin" --port "$port" --http-port 0 --data-dir "$data" --autosave 1 --log-level info >"$work/log$port" 2>&1 &
  pid=$!
  wait_for_ecsd "$ecsctl" "$port"
  call() { "$ecsctl" -p "$port" -t 60 call "$@"; }
  rss0=$(rss_kb "$pid")
  spawn_movers "$ecsctl" "$port" "$entities" '{"Position":{},"Velocity":{"x":1,"y":0.5}}'
  sleep 2  # the first save of the full world has begun
  before=$(call world.info '{}')
  faults0=$(faults "$pid")
  saves0=$(grep -c "saved tick" "$work/log$port" || true)
  sleep "$seconds"
  after=$(call world.info '{}')
  faults1=$(faults "$pid")
  saves1=$(grep -c "saved tick" "$work/log$port" || true)
  # RSS sampled over one more second (one save's cycle), lowest and highest: the lowest is the
  # world's own; the highest may include the copy made ready for the next save's child before
  # the fork (persist::spare_blocks), which the child would otherwise have allocated itself.
  rss_lo=""; rss_hi=""
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    r=$(rss_kb "$pid")
    [[ -z "$rss_lo" || "$r" -lt "$rss_lo" ]] && rss_lo=$r
    [[ -z "$rss_hi" || "$r" -gt "$rss_hi" ]] && rss_hi=$r
    sleep 0.1
  done
  ticks=$(($(echo "$after" | field tick) - $(echo "$before" | field tick)))
  skipped=$(($(echo "$after" | field skipped_ticks) - $(echo "$before" | field skipped_ticks)))
  overruns=$(($(echo "$after" | field overruns) - $(echo "$before" | field overruns)))
  # The world's stop for each fork: its median and its longest, and the longest CPU time of the
  # fork itself (the rest of a stop is waiting for a core); an ecsd from before said only the stop.
  forks=$( (grep -o "stopped [0-9.]* ms for the fork" "$work/log$port" || true) | awk '{print $2}' | sort -g)
  fork=$(echo "$forks" | awk 'NF { a[++n] = $1 } END { if (n) printf "%s/%s", a[int((n + 1) / 2)], a[n] }')
  fork_cpu=$( (grep -o "for the fork, [0-9.]* ms of it working" "$work/log$port" || true) | awk '{print $4}' | sort -g | tail -1)
  # The world's own figures over its last 256 ticks (about 4 s at 60 Hz: several saves).
  p50=$(echo "$after" | field tick_p50_ms | awk '{ printf "%.2f ms", $1 }')
  p99=$(echo "$after" | field tick_p99_ms | awk '{ printf "%.2f ms", $1 }')
  per=$(awk -v a="$rss0" -v lo="$rss_lo" -v hi="$rss_hi" -v n="$entities" \
    'BEGIN { printf "%.1f/%.1f B", (lo - a) * 1024 / n, (hi - a) * 1024 / n }')
  if [[ -n "$fork" ]]; then fork="$fork ms"; else fork="none"; fi  # an ecsd from before saved in the tick
  if [[ -n "$fork_cpu" ]]; then fork_cpu="$fork_cpu ms"; else fork_cpu="n/a"; fi
  # How long after the fork the saving process had its own copy of the world's arrays (ticks
  # before then pay copy-on-write faults); an ecsd from before did not say.
  copy=$( (grep -o "arrays [0-9.]* ms after it" "$work/log$port" || true) | awk '{print $2}' | sort -g | tail -1)
  if [[ -n "$copy" ]]; then copy="$copy ms"; else copy="n/a"; fi
  printf '| %-40s | %6d | %5d | %7d | %8d | %5d | %14s | %9s | %9s | %8s | %8s | %7d | %16s |\n' "$bin" "$ticks" \
    "$((seconds * 60))" "$skipped" "$overruns" "$((saves1 - saves0))" "$fork" "$fork_cpu" "$copy" "$p50" "$p99" \
    "$((faults1 - faults0))" "$per"
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  pid=""
  port=$((port + 1))
done
