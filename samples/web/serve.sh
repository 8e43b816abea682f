#!/usr/bin/env bash
# The sample page: builds graft for the host (the converter) and for the browser (the runtime),
# converts the Iris sample model to a descriptor, and serves the page with COOP/COEP on
# http://127.0.0.1:${PORT:-8000}/ (web/serve.py; Ctrl-C stops it).
set -euo pipefail
cd "$(dirname "$0")/../.."

bash scripts/deps.sh
export NODE_PATH=${NODE_PATH:-/usr/share/nodejs}
cmake --preset release
cmake --build --preset release -j2 --target graft_cli
cmake --preset web
cmake --build --preset web -j2

models=build/web-models
mkdir -p "$models"
build/release/bin/graft convert samples/models/iris/model.h5 -o "$models/iris"
exec python3 web/serve.py --port "${PORT:-8000}" --mount /=samples/web --mount /graft/=build/web/web/dist \
  --mount /models/=$models --mount /sample/=samples/models/iris
