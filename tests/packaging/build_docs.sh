#!/usr/bin/env bash
# The API reference (Doxygen) from the public headers: exits non-zero on any warning
# (WARN_AS_ERROR = FAIL_ON_WARNINGS in Doxyfile.in), 77 (skipped) when doxygen is not installed.
#   build_docs.sh BUILD/Doxyfile SOURCE_DIR
set -euo pipefail
doxyfile=$1 src=$2
if ! command -v doxygen >/dev/null; then
  echo "doxygen is not installed (Debian: doxygen; scripts/deps.sh installs it): skipped"
  exit 77
fi
out=$(sed -n 's/^OUTPUT_DIRECTORY *= *//p' "$doxyfile")
mkdir -p "$out"
cd "$src"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
doxygen "$doxyfile" >"$log" 2>&1 || status=$?
cat "$log"
# FAIL_ON_WARNINGS makes doxygen exit non-zero on a warning; the log check also catches a
# doxygen that ignored the setting.
if (( status != 0 )) || grep -qiE "warning|error" "$log"; then
  echo "docs_api: doxygen reported problems (exit $status)"
  exit 1
fi
test -f "$out/html/index.html" || { echo "docs_api: no $out/html/index.html"; exit 1; }
echo "docs_api: $out/html/index.html, no warnings"
