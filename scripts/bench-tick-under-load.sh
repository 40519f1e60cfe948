#!/usr/bin/env bash
# The tick while the network is busy (issue 15, sharing the cores): ecsd hosts a world of N movers
# (default 1M, Position+Velocity+RigidBody) at 60 Hz with --sim-threads T; the script reads the
# tick's p50/p99 over its last 256 ticks (world.info) after --seconds without load, then again
# after --seconds of ecsd_load (-c 50 -P 16, world.get_components) against the same server, with
# the ticks skipped in each window and the load's requests/s. One row per thread count.
#   scripts/bench-tick-under-load.sh                      build/release, 1M movers, threads 1 and 2
#   scripts/bench-tick-under-load.sh --threads 2 --entities 100000 --seconds 5
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench-lib.sh

bin=build/release/bin
entities=1000000
seconds=5
threads=(1 2)
while [[ $# -gt 0 ]]; do
  case "$1" in
    --bin) bin="$2"; shift 2 ;;
    --entities) entities="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --threads) IFS=, read -r -a threads <<<"$2"; shift 2 ;;
    *) echo "usage: scripts/bench-tick-under-load.sh [--bin DIR] [--entities N] [--seconds S] [--threads 1,2]" >&2
       exit 2 ;;
  esac
done

pid=""
cleanup() { [[ -n "$pid" ]] && kill -9 "$pid" 2>/dev/null || true; }
trap cleanup EXIT

printf '| %-11s | %-22s | %-22s | %-17s | %s\n' "sim threads" "no load: p50 / p99 ms" "under load: p50 / p99" "skipped (no load / load)" "load req/s"
printf '|%s|\n' "-------------|------------------------|------------------------|-------------------|-----------"
port=7881
for t in "${threads[@]}"; do
  "$bin/ecsd" --port "$port" --http-port 0 --sim-threads "$t" --log-level warn >/dev/null 2>&1 &
  pid=$!
  wait_for_ecsd "$bin/ecsctl" "$port"
  call() { "$bin/ecsctl" -p "$port" -t 60 call "$@"; }
  spawn_movers "$bin/ecsctl" "$port" "$entities" '{"Position":{},"Velocity":{"x":1},"RigidBody":{}}'
  a=$(call world.info '{}')
  sleep "$seconds"
  b=$(call world.info '{}')
  "$bin/ecsd_load" --port "$port" -c 50 -P 16 --duration "$((seconds + 1))" --warmup 0 --json >"/tmp/ecsd_load.$$" 2>/dev/null &
  load=$!
  sleep "$seconds"
  c=$(call world.info '{}')
  wait "$load"
  rps=$(jq -r '.requests_per_s // .rps // empty' "/tmp/ecsd_load.$$" | awk '{printf "%.0f", $1}')
  rm -f "/tmp/ecsd_load.$$"
  q() { echo "$1" | jq -r ".$2"; }
  printf '| %-11s | %-22s | %-22s | %-17s | %s\n' "$t" \
    "$(printf '%.2f / %.2f' "$(q "$b" tick_p50_ms)" "$(q "$b" tick_p99_ms)")" \
    "$(printf '%.2f / %.2f' "$(q "$c" tick_p50_ms)" "$(q "$c" tick_p99_ms)")" \
    "$(($(q "$b" skipped_ticks) - $(q "$a" skipped_ticks))) / $(($(q "$c" skipped_ticks) - $(q "$b" skipped_ticks)))" \
    "${rps:-?}"
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  pid=""
  port=$((port + 1))
done
