#!/usr/bin/env bash
# Builds graft (dev preset: Debug, tests on) and runs the test suite; exits non-zero if a test fails.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/deps.sh
cmake --preset dev
cmake --build --preset dev -j2
ctest --preset dev --output-on-failure -j2 -LE report
