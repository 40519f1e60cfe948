#!/usr/bin/env bash
# The committed tooling, enforced (CI runs this after scripts/test.sh):
#   clang-format  every C++ file in the tree, --dry-run -Werror: one mis-formatted file fails
#   clang-tidy    the C++ sources a change touches, with .clang-tidy's warnings as errors
#
#   scripts/lint.sh            tidy the sources changed since the commit named in .ci/tidy-base
#                              (the last tree checked whole), plus uncommitted changes
#   scripts/lint.sh --all      tidy every source (minutes on 2 cores)
#   scripts/lint.sh FILE...    tidy these files
# clang-tidy reads build/lint/compile_commands.json, which it configures (no build).
set -euo pipefail
cd "$(dirname "$0")/.."

command -v clang-format >/dev/null && command -v clang-tidy >/dev/null || {
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends clang-format clang-tidy
}

echo "lint: clang-format over the tree"
git ls-files '*.cpp' '*.hpp' '*.cpp.in' | xargs clang-format --dry-run -Werror
echo "lint: clang-format: every file is formatted"

# Sources clang-tidy looks at: the server, the protocol library and ecsctl. A changed header is
# checked through the source of the same name beside it and through every changed source.
tidy_scope='^(server|protocol|client_cli)/.*\.(cpp|hpp)$'
files=()
if [[ "${1:-}" == --all ]]; then
  mapfile -t files < <(git ls-files 'server/*.cpp' 'protocol/*.cpp' 'client_cli/*.cpp')
elif [[ $# -gt 0 ]]; then
  files=("$@")
else
  base=$(cat .ci/tidy-base)
  if git merge-base --is-ancestor "$base" HEAD 2>/dev/null; then
    since=(git diff --name-only "$base" HEAD)
  else
    # A shallow clone without that commit: the files of the newest 50 commits stand in for it.
    echo "lint: .ci/tidy-base ($base) is not in this history: checking the last 50 commits' files" >&2
    since=(git log -n 50 --format= --name-only HEAD)
  fi
  mapfile -t changed < <({ "${since[@]}"; git diff --name-only HEAD; } | grep -E "$tidy_scope" | sort -u)
  for f in "${changed[@]}"; do
    [[ -f "$f" ]] || continue  # deleted since
    if [[ "$f" == *.hpp ]]; then
      [[ -f "${f%.hpp}.cpp" ]] && files+=("${f%.hpp}.cpp")
    else
      files+=("$f")
    fi
  done
  mapfile -t files < <(printf '%s\n' "${files[@]}" | grep . | sort -u || true)
fi

if [[ ${#files[@]} -eq 0 ]]; then
  echo "lint: clang-tidy: no source changed since $(cat .ci/tidy-base)"
  exit 0
fi
# A configure-only tree without unity batches: clang-tidy needs each source's own compile command.
cmake -S . -B build/lint -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DECSD_UNITY=OFF >/dev/null
echo "lint: clang-tidy over ${#files[@]} source(s)"
printf '%s\n' "${files[@]}" | xargs -P "$(nproc)" -n 2 clang-tidy -p build/lint --quiet
echo "lint: clang-tidy: clean"
