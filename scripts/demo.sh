#!/usr/bin/env bash
# Builds graft (release preset) and shows it on the sample models: the Iris classifier's layer
# summary and predictions; a Keras custom layer (BiasLayer) refused without its plugin and run with
# it; the Iris model as generated C++, compiled with the system compiler, giving the same predictions.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/deps.sh
cmake --preset release
cmake --build --preset release -j2 --target graft_cli graft_bias_layer

graft=build/release/bin/graft
out=build/release/demo
mkdir -p "$out"
sample=samples/models/iris  # see its README.md: a trained Iris species classifier
set -x
"$graft" inspect "$sample/model.h5"
"$graft" run "$sample/model.h5" --input "$sample/input.npy" --print | tee "$out/run.txt"
set +x
# The top class of each flower, by name (labels.txt holds one species per line, class 0 first).
echo "predicted species:"
awk 'NR == FNR { name[NR - 1] = $0; next }
     $1 == "top-3:" { p = $3; gsub(/[(),]/, "", p); printf "  flower %d: %s (p = %s)\n", n++, name[$2], p }' \
  "$sample/labels.txt" "$out/run.txt" | tee "$out/species.txt"

# A Keras model with a custom trainable layer, y = x + bias (bias trained to 100), on [0, 1, ..., 9]:
# graft refuses it by name without the plugin that converts BiasLayer, and runs it with the plugin.
custom=samples/models/bias_layer  # see its regenerate.py
echo
echo "custom layer BiasLayer, without its plugin (graft must refuse it):"
set -x
if "$graft" run "$custom/model.h5" --input "$custom/input.npy" --print; then set +x; echo "demo: expected a refusal" >&2; exit 1; fi
{ set +x; } 2>/dev/null
echo "refused by name, as it should be; now with the plugin plugins/bias_layer (expect 100, 101, ..., 109):"
set -x
"$graft" run "$custom/model.h5" --plugin build/release/plugins/libgraft_bias_layer.so --input "$custom/input.npy" \
  --print --verify "$custom/manifest.json"
set +x

# The Iris model as standalone generated C++ (only the standard library), compiled and run on the same flowers.
echo
echo "the Iris model as generated C++:"
cxx=${CXX:-c++}
# The program goes beside the generated set, not into it: graft replaces a set it wrote on the next
# run, and refuses to when it finds a file it did not write there (as an older demo left one).
rm -f "$out/cpp/classify_iris"
set -x
"$graft" convert "$sample/model.h5" --backend cpp -o "$out/cpp" --name iris
"$cxx" -std=c++17 -O2 -I "$out/cpp" -DIRIS_WEIGHTS="\"$out/cpp/iris.weights\"" samples/generated/main.cpp "$out/cpp/iris.cpp" \
  -o "$out/classify_iris"
set +x
# input.npy is a version 1 .npy: 10 bytes of magic, version and header length, the header, then float32 data.
header=$(od -A n -t u2 -j 8 -N 2 "$sample/input.npy" | tr -d ' ')
flowers=$(od -A n -v -t f4 -j $((10 + header)) "$sample/input.npy")
# shellcheck disable=SC2086  # one argument per measurement
"$out/classify_iris" $flowers | tee "$out/species_cpp.txt"
if cmp -s "$out/species.txt" "$out/species_cpp.txt"; then
  echo "generated C++ gives the same predictions as graft run"
else
  echo "demo: the generated C++ predicts differently" >&2
  exit 1
fi
