// Running a batch a few samples at a time. A convolutional network at batch 32 can hold 150 MB
// of activations: every layer then streams its input and output through DRAM, where one sample
// at a time stays in the L3 (MobileNet v2 on a 32 MiB-L3 EPYC: 13.3 ms per sample at batch 32,
// 9.1 ms at batch 2). Slicing is only right for a graph that computes each sample from that sample
// alone (batch_mixing), and only faster where the activations, not the weights or the
// arithmetic, are what costs (best_slice).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "graft/ir/graph.hpp"

namespace graft::native {

/// Why running `g` (concrete shapes, the batch axis N of size `batch` >= 2) in slices of its
/// batch could change its results; "" when it cannot: every graph input and output has N first
/// and of size `batch`, every variable computed from the inputs has N of that size, and every
/// operator reading one is of a type that computes each sample from the same sample of its
/// inputs, along no attribute axis N. Operator types it does not know (plugins') refuse.
std::string batch_mixing(const Graph& g, std::int64_t batch);

/// What one sample costs, per operator of `g` with the batch 1: the FLOPs (2 per multiply-add
/// with a weight constant, else one per output element) and the bytes of the variables computed
/// from the inputs that the operator reads and writes (float32 words each).
struct SampleCosts {
    struct Op {
        double flops = 0, bytes = 0;
    };
    std::vector<Op> ops;
    double weight_bytes = 0;  // the constants, read once per run whatever the batch
};
SampleCosts sample_costs(const Graph& batch1);

/// What the cost model knows of the machine: caches (cpu::cache_bytes) and the threads running.
struct CacheModel {
    std::size_t l2_bytes = 0, l3_bytes = 0;  // L2 per core; the share of the L3 counted on
    int threads = 1;
    /// This machine's L2, and of its L3 kL3PerThread per hardware thread the process may use.
    static CacheModel this_machine(int threads);
};
inline constexpr std::size_t kL3PerThread = std::size_t{6} << 20;

/// The modelled time of running a batch of `batch` in slices of `slice` (the last one smaller
/// when `slice` does not divide it), in FLOP-equivalents: per operator and slice its FLOPs plus its
/// bytes times the cost of a byte at the level its bytes fit in (L2 of the threads, L3 beside the
/// weights when they fit there too, DRAM), plus the weights once per slice and a fixed cost per
/// operator run.
double slice_cost(const SampleCosts& c, std::int64_t batch, std::int64_t slice, const CacheModel& m);

/// The slice (a power of two below `batch`) the model says runs `batch` fastest, if it saves
/// at least kMinSaving of the unsliced time; else `batch`.
std::int64_t best_slice(const SampleCosts& c, std::int64_t batch, const CacheModel& m);
inline constexpr double kMinSaving = 0.05;

}  // namespace graft::native
