#!/usr/bin/env bash
# The sanitizer half of scripts/test.sh (README, "Tests"); exits non-zero on any report.
#   fuzz preset (clang-14, ASan + UBSan, UB aborts): ctest --preset fuzz runs each libFuzzer
#     target for a few seconds over seeds made from the fixtures (label fuzz); then
#     graft_sanitizer_tests: hostile files, the HDF5 box, ONNX, descriptors, the CLI's errors, every
#     Keras fixture model end to end.
#   tsan preset (g++, ThreadSanitizer): graft_concurrency_tests, one shared Model, threads with a
#     Session each and 2 intra-op threads.
# Each tree builds only those targets (the library, the tool, the HDF5 helper and a few test files).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

bash scripts/deps.sh
source scripts/compiler_cache.sh
start=$SECONDS

cmake --preset fuzz -DGRAFT_BUILD_TESTS=ON
cmake --build build/fuzz -j2 --target graft_fuzzers graft_sanitizer_tests graft_cli
ctest --preset fuzz --output-on-failure -j2
(cd build/fuzz/tests &&
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  LSAN_OPTIONS=suppressions="$root/tests/fuzz/lsan.supp" ./graft_sanitizer_tests)
echo "graft: ASan + UBSan stage took $((SECONDS - start)) s"

start=$SECONDS
cmake --preset tsan
cmake --build build/tsan -j2 --target graft_concurrency_tests
(cd build/tsan/tests && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 ./graft_concurrency_tests)
echo "graft: TSan stage took $((SECONDS - start)) s"
