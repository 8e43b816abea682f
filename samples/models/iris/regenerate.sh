#!/bin/sh
# Regenerate graft's sample model samples/models/iris/ (model.h5, input.npy, expected.npy,
# labels.txt, manifest.json): train the Iris classifier in tfjs, write the Keras 2.3.1 .h5, read it
# back and check it (h5py layout + numpy forward pass), rebuild it in tfjs from the file and require
# identical predictions. Deterministic: a rerun gives byte-identical files. See README.md.
#
#   sh samples/models/iris/regenerate.sh
#
# Needs what tests/fixtures/regenerate.sh needs: node >= 16, Debian /usr/bin/python3 with h5py and
# numpy, and @tensorflow/tfjs 4.22.0 from $NODE_PATH or tests/fixtures/node_modules (installed with
# `npm install --ignore-scripts` from tests/fixtures/package.json when missing).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
GEN=$(cd "$HERE/../../../tests/fixtures" && pwd)
PY=/usr/bin/python3

if [ -n "${NODE_PATH:-}" ] && [ -d "${NODE_PATH%%:*}/@tensorflow/tfjs" ]; then
  echo "using tfjs from NODE_PATH=$NODE_PATH"
else
  if [ ! -d "$GEN/node_modules/@tensorflow/tfjs" ]; then
    echo "installing @tensorflow/tfjs 4.22.0 into $GEN/node_modules"
    (cd "$GEN" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error)
  fi
  NODE_PATH=$GEN/node_modules
fi
export NODE_PATH

DUMPS=$(mktemp -d)
trap 'rm -rf "$DUMPS"' EXIT
rm -f "$HERE/model.h5" "$HERE/input.npy" "$HERE/expected.npy" "$HERE/labels.txt" "$HERE/manifest.json"
node "$GEN/gen/train_iris.js" "$HERE" "$DUMPS"                  # tfjs: train, input.npy, expected.npy, labels.txt, dump
$PY "$GEN/gen/write_sample.py" "$DUMPS" "$HERE"                  # h5py: model.h5 + manifest.json, read back, numpy check
node "$GEN/gen/reload_check.js" "$DUMPS" "$(dirname "$HERE")"    # tfjs: rebuild from the .h5 contents, identical outputs
echo "sample model OK: $HERE"
