#!/usr/bin/env bash
# Runs every libFuzzer target (tests/fuzz/NAME_fuzz.cpp) for a while, one per core at a time.
#   scripts/fuzz.sh [seconds]   seconds per target (default 30)
# Builds the fuzz targets with clang, libFuzzer, ASan and UBSan in build/sanitize, the tree
# `scripts/test.sh --sanitize` builds with the same settings (after that run nothing is rebuilt).
# Each target starts from its committed seeds (tests/fuzz/corpus/NAME, never written to) plus a
# fresh corpus dir (build/sanitize/corpus/NAME, where new inputs go). Prints one line per target;
# exits non-zero when any target crashed, leaked, ran out of memory or timed out. What it found is
# in build/sanitize/artifacts/NAME/ (reproduce: build/sanitize/bin/NAME_fuzz FILE), its log in
# build/sanitize/logs/.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-30}"
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: scripts/fuzz.sh [seconds]" >&2
  exit 2
fi

# clang and its libFuzzer runtime come with the test packages (scripts/install-deps.sh).
if ! command -v clang++ >/dev/null ||
   [ ! -e "$(clang++ --print-runtime-dir)/libclang_rt.fuzzer-$(uname -m).a" ]; then
  scripts/install-deps.sh
fi

build_dir=build/sanitize
targets=()
for source in tests/fuzz/*_fuzz.cpp; do
  name="$(basename "$source" .cpp)"
  targets+=("${name%_fuzz}")
done

ECSD_CONFIGURE_ONLY=1 scripts/test.sh --sanitize >/dev/null
cmake --build "$build_dir" --parallel 2 --target "${targets[@]/%/_fuzz}"

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

final_stat() {  # final_stat NAME LOG: the value of libFuzzer's final stat::NAME, or "?"
  sed -n "s/^stat::$1: *//p" "$2" | tail -n 1 | grep . || echo "?"
}

# One target per core at a time: each libFuzzer process is single-threaded.
jobs="$(nproc)"

run_target() {  # run_target NAME: fuzzes it; its result line goes to $build_dir/logs/NAME.result
  local t="$1"
  local corpus="$build_dir/corpus/$t" artifacts="$build_dir/artifacts/$t" log="$build_dir/logs/$t.log"
  rm -rf "$corpus" "$artifacts"
  mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
  echo "fuzz: $t for ${seconds} s"
  local rc=0
  "$build_dir/bin/${t}_fuzz" "$corpus" "tests/fuzz/corpus/$t" -max_total_time="$seconds" -timeout=10 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" >"$log" 2>&1 || rc=$?
  local found=() f result
  for f in "$artifacts"/*; do
    [ -e "$f" ] || continue
    case "$(basename "$f")" in slow-unit-*) ;; *) found+=("$f") ;; esac
  done
  if [ "$rc" -ne 0 ] || [ ${#found[@]} -gt 0 ]; then
    result="FOUND (exit $rc) ${found[*]:-} (log: $log)"
    tail -n 40 "$log" >&2
  else
    result="nothing found"
  fi
  printf '%-16s %8s exec/s %10s runs %5s new units  %s\n' "$t" "$(final_stat average_exec_per_sec "$log")" \
    "$(final_stat number_of_executed_units "$log")" "$(final_stat new_units_added "$log")" "$result" \
    >"$build_dir/logs/$t.result"
}

mkdir -p "$build_dir/logs"
running=0
for t in "${targets[@]}"; do
  rm -f "$build_dir/logs/$t.result"
  run_target "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
done
wait || true

failed=0
echo "fuzz summary (${seconds} s per target, ${jobs} at a time):"
for t in "${targets[@]}"; do
  line="$(cat "$build_dir/logs/$t.result" 2>/dev/null || echo "$t: no result (the run itself failed)")"
  printf '  %s\n' "$line"
  case "$line" in *"nothing found") ;; *) failed=1 ;; esac
done
exit "$failed"
