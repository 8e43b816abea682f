#!/usr/bin/env bash
# Installs the Debian packages graft needs that are missing: with apt-get when run as root,
# otherwise prints the command to run and exits 1. Silent when nothing is missing.
set -euo pipefail

packages=(
  build-essential cmake ccache                  # toolchain (ccache: scripts/compiler_cache.sh)
  libhdf5-dev rapidjson-dev libboost-dev        # library: HDF5 reader, JSON, Boost.DLL
  zlib1g-dev                                    # CRC-32 of descriptor weights
  libfmt-dev libcli11-dev catch2                # formatting, command line, tests
  libxtensor-dev libxsimd-dev                   # .npy I/O
  libonnx-dev libprotobuf-dev                   # ONNX models (ModelProto, checker)
  libzip-dev zipcmp zipmerge ziptool            # Keras 3 .keras archives (libzip's CMake config checks its tools exist)
  libseccomp-dev pkg-config                     # the sandboxed HDF5 reader graft-h5-reader (seccomp filter)
  python3 python3-numpy python3-h5py            # the corpus checker
  doxygen                                       # the API reference (docs target, test docs_api)
  clang-14 libclang-rt-14-dev                   # the fuzz preset: libFuzzer, ASan + UBSan (scripts/test_sanitizers.sh)
  emscripten chromium                           # the browser runtime (web/) and its headless tests
)

missing=()
for p in "${packages[@]}"; do
  if [[ $(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null) != installed ]]; then
    missing+=("$p")
  fi
done
(( ${#missing[@]} == 0 )) && exit 0

if (( EUID == 0 )); then
  echo "graft: installing ${missing[*]}"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "graft needs these Debian packages: ${missing[*]}" >&2
  echo "install them with:" >&2
  echo "  sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
