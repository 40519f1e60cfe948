#!/usr/bin/env bash
# ecs_bench and the same work done by EnTT, in one run, pinned to one core: ratios travel between
# machines, absolute figures do not. EnTT is not a Debian package, so bring a checkout yourself
# (git clone https://github.com/skypjack/entt) and never commit it.
#   scripts/bench-vs-entt.sh --entt ../entt                  Release ecs_bench from build/release
#   scripts/bench-vs-entt.sh --entt ../entt --repetitions 5 --build-dir build/release
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench-lib.sh

anchor_args --entt "$@"
[[ -f "$anchor_dir/single_include/entt/entt.hpp" ]] || {
  echo "bench-vs-entt: give --entt the root of an EnTT checkout (single_include/entt/entt.hpp)" >&2
  exit 2
}
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
g++ -std=c++20 -O3 -DNDEBUG -I"$anchor_dir/single_include" tests/bench/anchors/entt_bench.cpp -o "$bin/entt_bench" \
  -lbenchmark -lpthread
compare_with_anchor entt EnTT "$bin/entt_bench" create update_view add_remove destroy_each destroy
