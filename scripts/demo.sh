#!/usr/bin/env bash
# Builds graft (release preset) and shows it on the sample model: the layer summary, then the
# predictions for the sample input.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/deps.sh
cmake --preset release
cmake --build --preset release -j2 --target graft_cli

graft=build/release/bin/graft
sample=samples/models/iris  # see its README.md: a trained Iris species classifier
set -x
"$graft" inspect "$sample/model.h5"
"$graft" run "$sample/model.h5" --input "$sample/input.npy" --print | tee build/release/demo-run.txt
set +x
# The top class of each flower, by name (labels.txt holds one species per line, class 0 first).
echo "predicted species:"
awk 'NR == FNR { name[NR - 1] = $0; next }
     $1 == "top-3:" { p = $3; gsub(/[(),]/, "", p); printf "  flower %d: %s (p = %s)\n", n++, name[$2], p }' \
  "$sample/labels.txt" build/release/demo-run.txt
