#!/usr/bin/env bash
# The installed package, used the way a host application and a plugin author use it:
#  1. cmake --install the build tree into a temporary prefix; check the layout (headers, library,
#     tool, sample plugins, lib/cmake/graft) and, for a shared libgraft, its SONAME and exports;
#  2. configure + build samples/consumer (find_package(graft), graft::graft), samples/plugin and
#     plugins/bias_layer out of tree (find_package(graft), graft::core only), against that prefix;
#  3. run the consumer on samples/models/iris (must match expected.npy within 1e-5), on the
#     custom_bias_layer fixture with the out-of-tree plugin loaded by graft::load_plugin, and on
#     cases that must fail (a perturbed reference; the fixture without its plugin).
#
#   install_and_consume.sh CMAKE BUILD_DIR SOURCE_DIR [GENERATOR] [CONFIG]
# GRAFT_KEEP_PACKAGING_TMP=1 keeps the temporary directory for a look afterwards.
set -euo pipefail
cmake=$1 build=$2 src=$3 generator=${4:-Unix Makefiles} config=${5:-}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/graft-packaging.XXXXXX")
if [[ -z ${GRAFT_KEEP_PACKAGING_TMP:-} ]]; then trap 'rm -rf "$tmp"' EXIT; else echo "keeping $tmp"; fi
prefix=$tmp/prefix
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }

# ---- 1. install ------------------------------------------------------------------------------
step "build the installed targets (a no-op when the tree is built), then install into $prefix"
"$cmake" --build "$build" --target graft graft_cli graft_bias_layer graft_channel_swish -j2 >/dev/null
"$cmake" --install "$build" --prefix "$prefix" ${config:+--config "$config"} >"$tmp/install.log"

libdir=lib
[[ -d $prefix/lib ]] || fail "no $prefix/lib (install log: $(cat "$tmp/install.log"))"
[[ -d $prefix/lib64 && ! -f $prefix/lib/cmake/graft/graftConfig.cmake ]] && libdir=lib64
for f in include/graft/graft.hpp include/graft/plugin.hpp include/graft/export.hpp include/graft/version.hpp \
         include/graft/ir/graph.hpp include/graft/frontend/layer.hpp \
         "$libdir/cmake/graft/graftConfig.cmake" "$libdir/cmake/graft/graftConfigVersion.cmake" \
         "$libdir/cmake/graft/graftTargets.cmake" "$libdir/cmake/graft/graftCoreTargets.cmake" bin/graft \
         libexec/graft/graft-h5-reader \
         "$libdir/graft/plugins/libgraft_bias_layer.so" "$libdir/graft/plugins/libgraft_channel_swish.so"; do
  [[ -e $prefix/$f ]] || fail "not installed: $f"
done
# No test plugin, no build-tree path in the package.
[[ -z $(ls "$prefix/$libdir/graft/plugins" | grep -v '^libgraft_') ]] || fail "unexpected plugins: $(ls "$prefix/$libdir/graft/plugins")"
if grep -rl -- "$build" "$prefix/$libdir/cmake/graft" >/dev/null; then fail "the CMake package names the build tree $build"; fi

abi=$(sed -n 's/^#define GRAFT_PLUGIN_ABI_VERSION \([0-9]*\)u\{0,1\}.*/\1/p' "$prefix/include/graft/version.hpp")
version=$(sed -n 's/^#define GRAFT_VERSION_STRING "\(.*\)"/\1/p' "$prefix/include/graft/version.hpp")
[[ -n $abi && -n $version ]] || fail "cannot read the ABI version and version from the installed headers"

if [[ -e $prefix/$libdir/libgraft.so ]]; then
  kind=shared
  soname=$(readelf -d "$prefix/$libdir/libgraft.so" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
  [[ $soname == "libgraft.so.$abi" ]] || fail "SONAME is '$soname', expected libgraft.so.$abi (the plugin ABI version)"
  [[ -e $prefix/$libdir/libgraft.so.$abi ]] || fail "no $libdir/libgraft.so.$abi"
  # Exports are explicit: the host API is there, the internals (the Keras readers, the kernels,
  # inline core code) are not.
  nm -DC --defined-only "$prefix/$libdir/libgraft.so" >"$tmp/exports.txt"
  for sym in 'graft::load(' 'graft::make_builtin_registry()' 'graft::load_plugin(' 'graft::Model::run(' \
             'graft::keras::convert(' 'graft::verify(' 'graft::descriptor::read(' 'graft::optimize::pipeline_for('; do
    grep -qF -- "$sym" "$tmp/exports.txt" || fail "libgraft.so does not export $sym"
  done
  n_exports=$(grep -c ' [TW] .*graft::' "$tmp/exports.txt" || true)
  n_all=$(nm -C --defined-only "$prefix/$libdir/libgraft.so" | grep -c ' [TtWw] .*graft::' || true)
  (( n_exports * 4 < n_all )) || fail "libgraft.so exports $n_exports of its $n_all graft functions: visibility is not hidden"
  echo "libgraft.so: SONAME $soname, exports $n_exports of $n_all graft functions"
elif [[ -e $prefix/$libdir/libgraft.a ]]; then
  kind=static
else
  fail "neither libgraft.so nor libgraft.a in $prefix/$libdir"
fi
echo "installed graft $version ($kind, plugin ABI $abi)"

out=$("$prefix/bin/graft" --version)
[[ $out == "graft $version" ]] || fail "installed 'graft --version' printed '$out', expected 'graft $version'"
"$prefix/bin/graft" plugins "$prefix/$libdir/graft/plugins" | grep -q "converter  *keras:BiasLayer" \
  || fail "the installed tool does not load the installed plugins"
# The installed tool reads HDF5 through the installed sandboxed reader, found relative to itself.
GRAFT_H5_HELPER= "$prefix/bin/graft" run "$src/samples/models/iris/model.h5" --input "$src/samples/models/iris/input.npy" \
  --output "$tmp/iris_cli.npy" || fail "the installed tool cannot read an .h5 model through libexec/graft/graft-h5-reader"

# ---- 2. out-of-tree projects against the prefix ------------------------------------------------
configure_and_build() {  # NAME SOURCE [cmake args...]
  local name=$1 source=$2
  shift 2
  step "configure and build $name against the prefix"
  if ! "$cmake" -S "$source" -B "$tmp/$name" -G "$generator" -DCMAKE_PREFIX_PATH="$prefix" \
         "-DCMAKE_CXX_FLAGS=-Wall -Wextra -Werror" "$@" >"$tmp/$name.configure.log" 2>&1; then
    cat "$tmp/$name.configure.log"; fail "configuring $name"
  fi
  grep -q "graft_DIR:PATH=$prefix/" "$tmp/$name/CMakeCache.txt" || fail "$name did not find graft in $prefix"
  if ! "$cmake" --build "$tmp/$name" -j2 >"$tmp/$name.build.log" 2>&1; then
    cat "$tmp/$name.build.log"; fail "building $name"
  fi
}
configure_and_build consumer "$src/samples/consumer"
configure_and_build square_plugin "$src/samples/plugin"
configure_and_build bias_plugin "$src/tests/packaging/bias_plugin" -DGRAFT_SOURCE_DIR="$src"
configure_and_build conan_test_package "$src/test_package"   # the Conan recipe's test, on CMake's package
bias=$tmp/bias_plugin/libgraft_bias_layer.so square=$tmp/square_plugin/libgraft_square.so
# Plugins link graft::core only: nothing of libgraft, whichever kind it is.
for so in "$bias" "$square"; do
  [[ -f $so ]] || fail "no $so"
  if readelf -d "$so" | grep -q 'NEEDED.*libgraft'; then fail "$so links libgraft"; fi
done

# A static libgraft asks a C++-only project for the C language (FindHDF5), and says so.
if [[ $kind == static ]]; then
  step "a C++-only project using graft::graft: find_package must explain"
  mkdir -p "$tmp/cxx_only"
  printf 'cmake_minimum_required(VERSION 3.16)\nproject(cxx_only LANGUAGES CXX)\nfind_package(graft REQUIRED)\n' >"$tmp/cxx_only/CMakeLists.txt"
  if "$cmake" -S "$tmp/cxx_only" -B "$tmp/cxx_only/build" -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/cxx_only.log" 2>&1; then
    fail "a C++-only project found a static graft (its link would then fail later)"
  fi
  grep -q "needs the C language" "$tmp/cxx_only.log" || { cat "$tmp/cxx_only.log"; fail "no clear message for a C++-only project"; }
fi

# graft_generate_model() comes with the package, bound to the installed tool.
if [[ -f $prefix/$libdir/cmake/graft/GraftGenerate.cmake ]]; then
  step "graft_generate_model() and GRAFT_EXECUTABLE from find_package(graft COMPONENTS core)"
  mkdir -p "$tmp/generate"
  cat >"$tmp/generate/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.16)
project(generate_check LANGUAGES NONE)
find_package(graft REQUIRED COMPONENTS core)
if(NOT COMMAND graft_generate_model OR NOT GRAFT_EXECUTABLE STREQUAL "${GRAFT_EXPECTED_TOOL}")
  message(FATAL_ERROR "graft_generate_model: defined? GRAFT_EXECUTABLE=${GRAFT_EXECUTABLE}")
endif()
EOF
  "$cmake" -S "$tmp/generate" -B "$tmp/generate/build" -DCMAKE_PREFIX_PATH="$prefix" \
    -DGRAFT_EXPECTED_TOOL="$prefix/bin/graft" >"$tmp/generate.log" 2>&1 || { cat "$tmp/generate.log"; fail "GraftGenerate from the package"; }
fi

# ---- 3. run ----------------------------------------------------------------------------------
step "Conan test_package program"
"$tmp/conan_test_package/test_package" | tee "$tmp/test_package.out"
grep -q "keras Dense converter found" "$tmp/test_package.out" || fail "test_package"

consumer=$tmp/consumer/graft_consumer
# A program linking a static libgraft from a prefix other than the configured one is told where the
# HDF5 reader is (docs/security.md); a shared libgraft finds it relative to itself.
[[ $kind == static ]] && export GRAFT_H5_HELPER=$prefix/libexec/graft/graft-h5-reader
iris=$src/samples/models/iris fixture=$src/tests/fixtures/keras/custom_bias_layer

step "consumer: Iris sample model"
"$consumer" "$iris/model.h5" "$iris/input.npy" "$iris/expected.npy" | tee "$tmp/iris.out"
grep -q "^OK: 0 of 18 values off" "$tmp/iris.out" || fail "Iris predictions"

step "consumer: custom_bias_layer with the out-of-tree plugins loaded by graft::load_plugin"
"$consumer" "$fixture/model.h5" "$fixture/input_dense_1_input.npy" "$fixture/output_dense_2.npy" \
  --plugin "$bias" --plugin "$square" | tee "$tmp/bias.out"
grep -q "^plugin bias_layer " "$tmp/bias.out" && grep -q "^plugin square " "$tmp/bias.out" || fail "plugins not loaded"
grep -q "^OK: 0 of " "$tmp/bias.out" || fail "custom_bias_layer outputs"

# The comparison can fail: one Iris reference value moved by 1e-4 must be reported.
step "consumer: a perturbed reference must fail (exit 1)"
python3 - "$iris/expected.npy" "$tmp/perturbed.npy" <<'EOF'
import struct, sys  # no numpy needed: a float32 '<f4' .npy, version 1 header
data = bytearray(open(sys.argv[1], "rb").read())
assert data[:6] == b"\x93NUMPY" and data[6] == 1 and b"'<f4'" in data[:128], "expected a float32 .npy v1"
offset = 10 + struct.unpack("<H", data[8:10])[0] + 7 * 4  # value 7
struct.pack_into("<f", data, offset, struct.unpack_from("<f", data, offset)[0] + 1e-4)
open(sys.argv[2], "wb").write(data)
EOF
status=0
"$consumer" "$iris/model.h5" "$iris/input.npy" "$tmp/perturbed.npy" >"$tmp/perturbed.out" || status=$?
cat "$tmp/perturbed.out"
(( status == 1 )) && grep -q "^MISMATCH: 1 of 18 values off" "$tmp/perturbed.out" || fail "a perturbed reference passed (exit $status)"

# graft's exceptions cross the library boundary: the consumer catches graft::Error (exit 2).
step "consumer: custom_bias_layer without its plugin must fail with graft's error (exit 2)"
status=0
"$consumer" "$fixture/model.h5" "$fixture/input_dense_1_input.npy" "$fixture/output_dense_2.npy" 2>"$tmp/noplugin.err" || status=$?
cat "$tmp/noplugin.err"
(( status == 2 )) && grep -q "unsupported error: .*BiasLayer" "$tmp/noplugin.err" || fail "missing plugin (exit $status)"

echo "packaging: installed graft $version ($kind) consumed by samples/consumer and two out-of-tree plugins: OK"
