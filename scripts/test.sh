#!/usr/bin/env bash
# Builds graft and runs the whole test suite; exits non-zero if any test fails.
#   1. dev preset (Debug, the system g++): every test registered with CTest but the reports; the
#      web preset (Emscripten) first, for the browser tests (label web).
#   2. sanitizers (scripts/test_sanitizers.sh): a clang tree with AddressSanitizer + UBSan runs a
#      short smoke run of each libFuzzer target and the untrusted-input subset of the tests; a
#      ThreadSanitizer tree runs the concurrency test.
# GRAFT_TEST_SANITIZERS=0 skips step 2 for a quicker local loop; CI (.ci/run) runs both.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/deps.sh
source scripts/compiler_cache.sh
cmake --preset dev
cmake --build --preset dev -j2
# The browser runtime (web/README.md), which the web-labelled tests run in headless Chromium.
# Debian's emcc runs its JavaScript tools with node, which needs to find Debian's node modules.
if command -v emcc > /dev/null; then
  export NODE_PATH=${NODE_PATH:-/usr/share/nodejs}
  cmake --preset web
  cmake --build --preset web -j2
fi
ctest --preset dev --output-on-failure -j2 -LE report

if [[ ${GRAFT_TEST_SANITIZERS:-1} != 0 ]]; then
  bash scripts/test_sanitizers.sh
fi
