#!/usr/bin/env bash
# Builds ecsd and runs the whole test suite through CTest.
#   scripts/test.sh              Debug build with -Werror, all tests
#   scripts/test.sh --sanitize   the same under AddressSanitizer + UBSan
set -euo pipefail
cd "$(dirname "$0")/.."

sanitize=OFF
build_dir=build/test
for arg in "$@"; do
  case "$arg" in
    --sanitize) sanitize=ON; build_dir=build/sanitize ;;
    *) echo "usage: scripts/test.sh [--sanitize]" >&2; exit 2 ;;
  esac
done

scripts/install-deps.sh
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DECSD_WERROR=ON -DECSD_SANITIZE="$sanitize"
cmake --build "$build_dir" --parallel "$(nproc)"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --test-dir "$build_dir" --output-on-failure --parallel "$(nproc)" --timeout 300
