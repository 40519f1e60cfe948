#!/usr/bin/env bash
# Two (or more) ecsd binaries under the same load, alternating, so that a noisy machine weighs on
# each alike: for each run and each binary, a fresh ecsd, then `ecsd_load -c 50 -P 16 -m METHOD`
# (`--pipeline 1` for one request in flight per connection), and one line of requests/s and server
# CPU per request. The figures of docs/benchmarks.md's "before
# and after" steps on the request path come from it.
#   scripts/bench-ab.sh --ecsd /tmp/prev/bin/ecsd --ecsd build/release/bin/ecsd
#   scripts/bench-ab.sh --method mutate --runs 5 --seconds 3 --ecsd A --ecsd B
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench-lib.sh

binaries=()
method=get
runs=3
seconds=2
pipeline=16
load=build/release/bin/ecsd_load
ecsctl=build/release/bin/ecsctl
while [[ $# -gt 0 ]]; do
  case "$1" in
    --ecsd) binaries+=("$2"); shift 2 ;;
    --method) method="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --pipeline) pipeline="$2"; shift 2 ;;
    --load) load="$2"; shift 2 ;;
    *) echo "usage: scripts/bench-ab.sh --ecsd PATH [--ecsd PATH]... [--method PRESET] [--runs N] [--seconds S] [--pipeline N]" >&2
       exit 2 ;;
  esac
done
[[ ${#binaries[@]} -gt 0 ]] || { echo "bench-ab.sh: give --ecsd at least once" >&2; exit 2; }

pid=""
cleanup() { [[ -n "$pid" ]] && kill -9 "$pid" 2>/dev/null || true; }
trap cleanup EXIT

printf '%-3s  %-40s  %-12s  %12s  %s\n' run ecsd "method/depth" requests/s "server CPU per request"
port=7811
for run in $(seq "$runs"); do
  for bin in "${binaries[@]}"; do
    "$bin" --port "$port" --http-port 0 >/dev/null 2>&1 &
    pid=$!
    wait_for_ecsd "$ecsctl" "$port"
    out=$("$load" --port "$port" -c 50 -P "$pipeline" -m "$method" -d "$seconds" --warmup 0.5 2>&1)
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    pid=""
    rate=$(echo "$out" | grep -o '[0-9]* requests/s' | awk '{print $1}')
    cpu=$(echo "$out" | grep -o 'server CPU [0-9.]* us' | awk '{print $3 " us"}')
    printf '%-3s  %-40s  %-12s  %12s  %s\n' "$run" "$bin" "$method/$pipeline" "$rate" "$cpu"
    port=$((port + 1))
  done
done
