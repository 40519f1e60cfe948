#!/usr/bin/env bash
# Installs the Debian 12 packages ecsd builds with. Idempotent: when everything
# is already there it prints one line and changes nothing.
#   scripts/install-deps.sh              what building and testing need
#   scripts/install-deps.sh --build-only what building needs (the Docker image's build stage)
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libasio-dev nlohmann-json3-dev libspdlog-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev libreadline-dev libhttp-parser-dev libzstd-dev libsimdjson-dev libjemalloc-dev
  liblua5.4-dev  # the Lua 5.4 that runs the systems and spells clients define
  libssl-dev  # OpenSSL's libcrypto: SHA-256 of the tokens in a --tokens file
)
if [ "${1:-}" != --build-only ]; then
  packages+=(
    e2fsprogs mount  # the disk-full tests mount a small tmpfs and a loop ext4 (as root)
    chromium  # the viewer's browser tests (tests/browser, driven by Node with puppeteer-core)
    python3 python3-pytest python3-venv  # the Python client's tests (clients/python), its pytest plugin and README install
    python3-kubernetes python3-jsonschema python3-yaml  # tests/deploy: the manifests against the Kubernetes models and the Agones schema
    gdb  # a test server that outlives SIGTERM has its threads' stacks printed before it is killed
    jq curl  # the docs' examples pipe ecsctl into jq and talk HTTP with curl (tests/docs)
    clang libclang-rt-14-dev  # the sanitizer builds and scripts/fuzz.sh: clang, its sanitizer and libFuzzer runtimes
  )
  # Node runs the browser suite and the Node client's tests; Debian's nodejs (18) serves when the
  # machine has no newer one of its own.
  command -v node >/dev/null && command -v npm >/dev/null || packages+=(nodejs npm)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all build dependencies present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
