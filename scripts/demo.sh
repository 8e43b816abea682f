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
"$graft" run "$sample/model.h5" --input "$sample/input.npy" --print
set +x
echo "classes: $(awk '{ printf "%s%d=%s", NR > 1 ? ", " : "", NR - 1, $0 }' "$sample/labels.txt")"
