#!/usr/bin/env bash
# Builds ecsd (Release) and starts it on 127.0.0.1:7777 with the default world.
# Extra arguments go to ecsd, e.g. scripts/run.sh --port 7000 --data-dir ./data
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build/release --parallel "$(nproc)" --target ecsd ecsctl
echo "ecsd: talk to it with build/release/bin/ecsctl ping (or any JSON-RPC line over TCP)"
exec build/release/bin/ecsd "$@"
