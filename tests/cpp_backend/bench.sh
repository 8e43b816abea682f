#!/usr/bin/env bash
# Generated C++ vs the native backend on one model: median milliseconds per inference, single thread.
#
#   tests/cpp_backend/bench.sh GRAFT MODEL.h5 INPUT.npy [REFERENCE.npy] [ITERS]
#
# GRAFT is the graft tool that generates the code; NATIVE_GRAFT (default GRAFT), a Release build of it,
# times the native backend. The model is generated with --batch taken from the
# input's first dimension, compiled with `c++ -O2 -march=native` (override with CXX / CXXFLAGS),
# checked against REFERENCE.npy (1e-4) when given, and timed; then `graft bench` times the native
# backend on the same input. Not a test: nothing asserts a timing.
set -euo pipefail
graft=$1 model=$2 input=$3 ref=${4:-} iters=${5:-200}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

batch=$(python3 -c "import sys
d=open(sys.argv[1],'rb').read(); h=d[10:10+int.from_bytes(d[8:10],'little')].decode()
print(h.split('(')[1].split(',')[0].strip(')'))" "$input")
"$graft" convert "$model" --backend cpp --name model --namespace gen --batch "$batch" -o "$work/gen" >/dev/null

cat > "$work/bench.cpp" <<CPP
#include "driver.hpp"
#include "$work/gen/model.cpp"
#include <algorithm>
#include <chrono>
int main(int argc, char** argv) {
    gen::Session s("$work/gen/model.weights");
    std::vector<std::int64_t> shape;
    auto x = graft_driver::read_npy("$input", shape);
    std::vector<float> y(gen::kOutputs[0].size);
    const float* in[] = {x.data()};
    float* out[] = {y.data()};
    const int iters = std::atoi(argv[1]);
    for (int i = 0; i < 5; ++i) s.run(in, out);
    std::vector<double> ms;
    for (int i = 0; i < iters; ++i) {
        auto t = std::chrono::steady_clock::now();
        s.run(in, out);
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count());
    }
    std::sort(ms.begin(), ms.end());
    std::printf("%.4f %.4f\n", ms[ms.size() / 2], ms[0]);
    if (argc > 2) {
        auto ref = graft_driver::read_npy(argv[2], shape);
        double worst = 0;
        for (std::size_t i = 0; i < ref.size(); ++i) worst = std::max(worst, (double)std::fabs(ref[i] - y[i]) - 1e-4 * std::fabs(ref[i]));
        if (ref.size() != y.size() || worst > 1e-4) { std::printf("MISMATCH %g\n", worst); return 1; }
    }
    return 0;
}
CPP
${CXX:-c++} -std=c++17 ${CXXFLAGS:--O2 -march=native} -I"$here" "$work/bench.cpp" -o "$work/bench"
read -r gen_median gen_min < <("$work/bench" "$iters" $ref)
native=$("${NATIVE_GRAFT:-$graft}" bench "$model" --input "$input" --iters "$iters" --json)
read -r native_median native_min < <(python3 -c "import json,sys; j=json.loads(sys.argv[1]); print(j['median_ms'], j['min_ms'])" "$native")
ratio() { python3 -c "print(round($1 / $2, 2))"; }
echo "$(basename "$(dirname "$model")") batch $batch: generated median ${gen_median} ms (min ${gen_min}), native median ${native_median} ms (min ${native_min}); ratio $(ratio "$gen_median" "$native_median") (min $(ratio "$gen_min" "$native_min"))"
