#!/usr/bin/env bash
# Builds ecsd (Release) and starts it on 127.0.0.1:7777 with the default world, filled with the demo
# scene (--demo: a ground, walls, falling slimes and wandering wisps) so the viewer shows something move.
# Extra arguments go to ecsd, e.g. scripts/run.sh --port 7000 --data-dir ./data
# ECSD_DEMO=0 scripts/run.sh starts with an empty default world instead.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build/release --parallel "$(nproc)" --target ecsd ecsctl
echo "ecsd: talk to it with build/release/bin/ecsctl ping (or any JSON-RPC line over TCP);"
echo "      it prints the viewer's address (http://127.0.0.1:7778/ unless --http-port says otherwise)"
demo=(--demo)
[[ "${ECSD_DEMO:-1}" == 0 ]] && demo=()
exec build/release/bin/ecsd "${demo[@]}" "$@"
