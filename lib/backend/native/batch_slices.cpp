#include "backend/native/batch_slices.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <unordered_set>

#include "cpu/caches.hpp"
#include "cpu/threadpool.hpp"
#include "ops/op_types.hpp"

namespace graft::native {

namespace {

/// Operator types whose output sample i is computed from sample i of their batched inputs (and
/// from constants) alone, as long as no axis attribute of theirs names N (checked apart). Not
/// here: PoolArgMax (its flat indices count the samples before), and every type a plugin adds.
const std::set<std::string>& separable_types() {
    using namespace ops;
    // One line per family (ops/op_types.hpp).
    // clang-format off
    static const std::set<std::string> types{
        kLinear, kBatchMatMul,
        kConv1D, kConv2D, kConv3D, kDepthwiseConv2D, kConvTranspose2D, kConvTranspose3D, kLocallyConnected2D,
        kPool2D, kPool3D, kGlobalPool,
        kActivation, kIdentity, kMerge, kSoftmax, kFusedElementwise, kBinary, kExpand,
        kBiasAdd, kAffine, kBatchNormalization, kPReLU, kLayerNorm, kGroupNorm, kL2Normalize, kLRN,
        kReshape, kTranspose, kConcat, kReverse, kPad, kDepthToSpace, kSpaceToDepth,
        kSimpleRNN, kLSTM, kGRU, kConvLSTM2D, kEmbedding, kNonZeroMask, kMasking,
        kCast, kGather, kWhere, kOneHot, kAttention, kResize, kUpsample, kResizeBilinear, kGridSample,
        kReduce, kArgMax, kArgMin, kHardmax, kDet, kTopK, kCumSum};
    // clang-format on
    return types;
}

/// Attributes that name the axes an operator works along (reduces, normalizes, contracts,
/// concatenates, reverses, pads): none may be N.
constexpr const char* kAxisKeys[] = {"axis", "axes", "x_axis", "y_axis"};

bool names_batch_axis(const AttrValue& v) {
    if (const auto* s = std::get_if<std::string>(&v)) return *s == Axis::N.name();
    if (const auto* l = std::get_if<std::vector<std::string>>(&v))
        return std::find(l->begin(), l->end(), Axis::N.name()) != l->end();
    return false;
}

/// "" when `v` has N first (where `first`) or anywhere, of size `batch`.
std::string batch_axis_problem(const Variable& v, std::int64_t batch, bool first) {
    const auto at = v.order().find(Axis::N);
    if (!at) return v.describe() + " has no batch axis N";
    if (first && *at != 0) return v.describe() + " does not have the batch axis N first";
    if (v.shape()[*at] != batch)
        return v.describe() + " has the batch axis N of size " + std::to_string(v.shape()[*at]) + " in a batch of " +
               std::to_string(batch);
    return "";
}

// The cost of moving a byte, in FLOPs at the FMA peak, by where the bytes fit. Measured by
// graft_roofline (bench/RESULTS.md): peak / bandwidth is 1.0 (L2), 1.5-1.75 (L3) and 5.6-7.2
// (DRAM) on the AMD EPYC machines graft was benchmarked on, with 1 or 2 threads alike.
constexpr double kByteL2 = 1.0, kByteL3 = 1.6, kByteDram = 6.0;
// What one operator run costs apart from its work (dispatch, thread pool wake-up): ~1 us.
constexpr double kPerOpRun = 1e5;

/// The cost of a byte of a working set of `bytes`, beside `resident` bytes that stay in the L3
/// (the weights, when they fit: every slice reads them again).
double byte_cost(double bytes, double resident, const CacheModel& m) {
    if (bytes <= static_cast<double>(m.l2_bytes) * std::max(1, m.threads)) return kByteL2;
    if (bytes + resident <= static_cast<double>(m.l3_bytes)) return kByteL3;
    return kByteDram;
}

}  // namespace

std::string batch_mixing(const Graph& g, std::int64_t batch) {
    std::unordered_set<const Variable*> batched;
    for (std::size_t i = 0; i < g.inputs().size(); ++i) {
        const std::string p = batch_axis_problem(*g.inputs()[i], batch, true);
        if (!p.empty()) return "input '" + g.input_name(i) + "': " + p;
        batched.insert(g.inputs()[i]);
    }
    const auto& types = separable_types();
    for (const Operator* op : g.topological_order()) {
        bool reads_batch = false;
        for (const auto& [name, v] : op->inputs()) reads_batch = reads_batch || batched.count(v);
        if (!reads_batch) continue;
        if (!types.count(op->type())) return op->describe() + " is not known to keep the samples of a batch apart";
        for (const char* key : kAxisKeys)
            if (op->attrs().has(key) && names_batch_axis(op->attrs().all().at(key)))
                return op->describe() + " works along the batch axis N (attribute '" + key + "')";
        const bool reshape = op->type() == ops::kReshape;  // reinterprets memory: N must lead on both sides
        for (const auto& [name, v] : op->inputs()) {
            if (!batched.count(v)) continue;
            const std::string p = batch_axis_problem(*v, batch, reshape);
            if (!p.empty()) return op->describe() + ": " + p;
        }
        for (const auto& [name, v] : op->outputs()) {
            const std::string p = batch_axis_problem(*v, batch, reshape);
            if (!p.empty()) return op->describe() + ": " + p;
            batched.insert(v);
        }
    }
    for (std::size_t i = 0; i < g.outputs().size(); ++i) {
        const Variable& v = *g.outputs()[i];
        if (!batched.count(&v)) return "output '" + g.output_name(i) + "' is not computed from the inputs";
        const std::string p = batch_axis_problem(v, batch, true);
        if (!p.empty()) return "output '" + g.output_name(i) + "': " + p;
    }
    return "";
}

SampleCosts sample_costs(const Graph& g) {
    SampleCosts c;
    std::unordered_set<const Variable*> weights;
    for (const Operator* op : g.topological_order()) {
        SampleCosts::Op cost;
        std::unordered_set<const Variable*> seen;
        auto add = [&](const Variable* v) {
            if (v->is_constant()) {
                weights.insert(v);
            } else if (seen.insert(v).second) {
                cost.bytes += 4.0 * static_cast<double>(v->numel());
            }
        };
        for (const auto& [name, v] : op->inputs()) add(v);
        for (const auto& [name, v] : op->outputs()) add(v);
        if (!op->outputs().empty()) {
            const Variable& out = *op->outputs().front().second;
            const double elems = static_cast<double>(out.numel());
            // The axis the weight maps to: a Linear's `axis` (an ONNX [N, T, features] value
            // names its positions N, C, T, so C is not its features), else C, else the last.
            std::optional<std::size_t> channel = out.order().find(Axis::C);
            if (op->type() == ops::kLinear && op->attrs().has("axis"))
                if (const auto* a = std::get_if<std::string>(&op->attrs().all().at("axis")))
                    if (const auto at = out.order().find(Axis(*a))) channel = at;
            const double cout = static_cast<double>(channel      ? out.shape()[*channel]
                                                    : out.ndim() ? out.shape().back()
                                                                 : 1);
            for (const auto& [name, v] : op->inputs())
                if (v->is_constant() && v->ndim() >= 2 && cout > 0)
                    cost.flops += 2.0 * elems * static_cast<double>(v->numel()) / cout;
            if (cost.flops == 0) cost.flops = elems;
        }
        c.ops.push_back(cost);
    }
    for (const Variable* w : weights) c.weight_bytes += 4.0 * static_cast<double>(w->numel());
    return c;
}

CacheModel CacheModel::this_machine(int threads) {
    static const std::size_t l2 = cpu::cache_bytes(2), l3 = cpu::cache_bytes(3);  // read /sys once
    // The L3 the model counts on is the part of it the rest of the machine leaves: a 2-vCPU VM on
    // a Zen 4 EPYC reports its CCX's 32 MiB, but read 100 GB/s only to 8-11 MB and DRAM's rate
    // from 24 MB (graft_roofline's bw_curve). kL3PerThread per hardware thread (at most the L3)
    // matches that, and leaves a whole L3 to a process that has all the cores sharing it.
    static const std::size_t share =
        std::min(l3, kL3PerThread * static_cast<std::size_t>(cpu::ThreadPool::hardware_threads()));
    return CacheModel{l2, share, std::max(1, threads)};
}

double slice_cost(const SampleCosts& c, std::int64_t batch, std::int64_t slice, const CacheModel& m) {
    auto one = [&](std::int64_t n) {
        const double s = static_cast<double>(n);
        const double weights_cost = byte_cost(c.weight_bytes, 0, m);
        const double resident = weights_cost == kByteDram ? 0 : c.weight_bytes;
        double t = c.weight_bytes * weights_cost;
        for (const auto& op : c.ops) t += op.flops * s + op.bytes * s * byte_cost(op.bytes * s, resident, m) + kPerOpRun;
        return t;
    };
    slice = std::clamp<std::int64_t>(slice, 1, batch);
    const std::int64_t full = batch / slice, rest = batch % slice;
    return static_cast<double>(full) * one(slice) + (rest ? one(rest) : 0.0);
}

std::int64_t best_slice(const SampleCosts& c, std::int64_t batch, const CacheModel& m) {
    const double whole = slice_cost(c, batch, batch, m);
    std::int64_t best = batch;
    double best_cost = whole * (1.0 - kMinSaving);
    for (std::int64_t s = 1; s < batch; s *= 2) {
        const double t = slice_cost(c, batch, s, m);
        if (t < best_cost) best = s, best_cost = t;
    }
    return best;
}

}  // namespace graft::native
