// The attention family: Attention, the core of Keras Attention / AdditiveAttention /
// MultiHeadAttention.
//   Attention   q, k, v with axes N, T, C (laid out NTC), a? (tanh score weights [DK]),
//               vmask? NT [N, Tv]; attrs heads, score ("dot" | "tanh"), scale, causal,
//               packed (q, k and v each [N, T, 3*heads*D]: the op reads the queries, keys and
//               values from their first, second and last thirds; PyTorch's fused projection);
//               y NTC [N, Tq, heads*DV]. Kernel: graft_rt/attention.hpp.
#pragma once

#include <cstdint>

#include "graft/ir/operator.hpp"
#include "graft_rt/attention.hpp"

namespace graft::ops {

struct AttentionAttrs {
    std::int64_t heads;
    graft_rt::AttentionScore score;
    float scale;
    bool causal;
    bool packed;

    /// ShapeError for heads < 1, UnsupportedError for a score other than dot or tanh.
    static AttentionAttrs parse(const Operator& op);
    /// The kernel's parameters for the op's inputs, checked (ShapeError).
    graft_rt::AttentionParams params(const Operator& op) const;
};

}  // namespace graft::ops
