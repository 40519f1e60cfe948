#!/usr/bin/env bash
# Runs Redis and ecsd side by side, in one run, with the same connections and pipeline depths, and
# prints one table: requests/s, p99 latency and the server's CPU time per request. Ratios travel
# between machines, absolute figures do not: compare the rows of one run.
#   scripts/bench-vs-redis.sh                    build Release ecsd, 50 connections, depths 16 and 1
#   scripts/bench-vs-redis.sh --build-dir build/test --seconds 3
# Installs redis-server and redis-tools (Debian's) when they are missing. Redis's CPU comes from
# /proc/PID/stat around its run; ecsd's from server.info's cpu, which ecsd_load reads itself.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=build/release
seconds=5
connections=50
depths=(16 1)
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build-dir) build_dir="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --connections) connections="$2"; shift 2 ;;
    *) echo "usage: scripts/bench-vs-redis.sh [--build-dir DIR] [--seconds N] [--connections N]" >&2; exit 2 ;;
  esac
done

if ! command -v redis-server >/dev/null || ! command -v redis-benchmark >/dev/null; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends redis-server redis-tools
fi
if [[ "$build_dir" == build/release ]]; then
  scripts/install-deps.sh --build-only
  cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build/release --parallel "$(nproc)" --target ecsd ecsd_load
fi

redis_port=6391
ecsd_port=7791
ecsd1_port=7792
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  # ecsd saves its world as it stops: let it finish before its data folder goes.
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# CPU seconds (user + system) of a process, from /proc/PID/stat.
cpu_of() {
  local ticks
  ticks=$(awk '{print $14 + $15}' "/proc/$1/stat")
  awk -v t="$ticks" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.6f", t / hz }' 
}

wait_port() {
  for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.05
  done
  echo "bench-vs-redis: nothing listens on port $1" >&2
  exit 1
}

redis-server --port "$redis_port" --save '' --appendonly no --daemonize no --logfile "$work/redis.log" &
pids+=($!)
redis_pid=$!
"$build_dir/bin/ecsd" --port "$ecsd_port" --http-port 0 --log-level warn >"$work/ecsd.log" 2>&1 &
pids+=($!)
# The same binary with one network thread, as Redis has: the rows that show what the second
# thread's hand-offs cost per request (docs/benchmarks.md, "Requests").
"$build_dir/bin/ecsd" --port "$ecsd1_port" --threads 1 --http-port 0 --log-level warn >"$work/ecsd1.log" 2>&1 &
pids+=($!)
wait_port "$redis_port"
wait_port "$ecsd_port"
wait_port "$ecsd1_port"
redis-cli -p "$redis_port" set key:__rand_int__ value >/dev/null

rows=()
row() { rows+=("$(printf '| %-56s | %5s | %12s | %9s | %20s |' "$1" "$2" "$3" "$4" "$5")"); }

for depth in "${depths[@]}"; do
  # redis-benchmark runs a request count, not a duration: size it from a short probe.
  probe=$(redis-benchmark -p "$redis_port" -c "$connections" -P "$depth" -n 20000 -t get -r 1 --csv | tail -1)
  rps=$(echo "$probe" | awk -F'","' '{print $2}' | tr -d '"')
  n=$(awk -v r="$rps" -v s="$seconds" 'BEGIN { printf "%.0f", r * s }')
  before=$(cpu_of "$redis_pid")
  line=$(redis-benchmark -p "$redis_port" -c "$connections" -P "$depth" -n "$n" -t get --csv | tail -1)
  after=$(cpu_of "$redis_pid")
  rps=$(echo "$line" | awk -F'","' '{print $2}' | tr -d '"')
  p99=$(echo "$line" | awk -F'","' '{print $7}' | tr -d '"')
  cpu_us=$(awk -v a="$after" -v b="$before" -v n="$n" 'BEGIN { printf "%.3f", (a - b) * 1e6 / n }')
  row "Redis GET" "$depth" "$(printf '%.0f' "$rps")" "$p99" "$cpu_us"

  # ecsd_row PORT PRESET LABEL
  ecsd_row() {
    local out rps p99 cpu_us method
    out=$("$build_dir/bin/ecsd_load" --port "$1" -c "$connections" -P "$depth" --duration "$seconds" \
      --warmup 1 --method "$2" --json)
    rps=$(echo "$out" | jq -r '.requests_per_s | floor')
    p99=$(echo "$out" | jq -r '.latency_us.p99 / 1000')
    cpu_us=$(echo "$out" | jq -r '.server_cpu_us_per_request * 1000 | round / 1000')
    method=$(echo "$out" | jq -r .method)
    row "ecsd $2 ($method)$3" "$depth" "$rps" "$p99" "$cpu_us"
  }
  for preset in get get_missing mutate ping query; do
    ecsd_row "$ecsd_port" "$preset" ""
  done
  for preset in get ping; do
    ecsd_row "$ecsd1_port" "$preset" ", --threads 1"
  done
done

echo "bench-vs-redis: $connections connections, ${seconds} s per row, $(nproc) cores, ecsd from $build_dir"
printf '| %-56s | %5s | %12s | %9s | %20s |\n' "server, request" "depth" "requests/s" "p99 ms" "server CPU µs/req"
printf '|%s|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..58})" "-------" "--------------" "-----------" "----------------------"
printf '%s\n' "${rows[@]}"
