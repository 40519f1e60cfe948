#!/usr/bin/env bash
# Runs the viewer's browser suite (viewer.test.mjs) as CTest does:
#   ECSD_BINARY=build/test/bin/ecsd tests/browser/run.sh [screenshot dir]
# Installs puppeteer-core from package-lock.json first when node_modules is missing (npm ci; no
# browser is downloaded: the suite drives Debian's /usr/bin/chromium).
set -euo pipefail
cd "$(dirname "$0")"
export PUPPETEER_SKIP_DOWNLOAD=1 PUPPETEER_SKIP_CHROMIUM_DOWNLOAD=1
if [[ ! -d node_modules/puppeteer-core ]]; then
  # Two build dirs may run the suite at once: one installs, the other waits for it.
  exec 9>.npm-ci.lock
  flock 9
  if [[ ! -d node_modules/puppeteer-core ]]; then
    echo "browser: npm ci (node_modules is missing)"
    npm ci --no-audit --no-fund --loglevel=error
  fi
  flock -u 9
fi
export ECSD_SCREENSHOTS="${1:-${ECSD_SCREENSHOTS:-$PWD}}"
exec node --test --test-reporter=spec viewer.test.mjs game.test.mjs
