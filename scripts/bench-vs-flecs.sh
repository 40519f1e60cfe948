#!/usr/bin/env bash
# ecs_bench and the same work done by flecs, in one run, pinned to one core: ratios travel between
# machines, absolute figures do not. flecs is not a Debian package, so bring a checkout yourself
# (git clone https://github.com/SanderMertens/flecs) and never commit it. Compiling flecs.c takes
# about 30 s.
#   scripts/bench-vs-flecs.sh --flecs ../flecs                 Release ecs_bench from build/release
#   scripts/bench-vs-flecs.sh --flecs ../flecs --repetitions 5 --build-dir build/release
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench-lib.sh

anchor_args --flecs "$@"
[[ -f "$anchor_dir/distr/flecs.c" && -f "$anchor_dir/distr/flecs.h" ]] || {
  echo "bench-vs-flecs: give --flecs the root of a flecs checkout (distr/flecs.c and distr/flecs.h)" >&2
  exit 2
}
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
gcc -O3 -DNDEBUG -c "$anchor_dir/distr/flecs.c" -o "$bin/flecs.o"
g++ -std=c++20 -O3 -DNDEBUG -I"$anchor_dir/distr" tests/bench/anchors/flecs_bench.cpp "$bin/flecs.o" \
  -o "$bin/flecs_bench" -lbenchmark -lpthread
compare_with_anchor flecs flecs "$bin/flecs_bench" create update_view destroy_each destroy
