// The attention family: Attention, the core of Keras Attention / AdditiveAttention /
// MultiHeadAttention.
//   Attention   q, k, v with axes N, T, C (laid out NTC), a? (tanh score weights [DK]),
//               vmask? NT [N, Tv]; attrs heads, score ("dot" | "tanh"), scale, causal;
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

    /// ShapeError for heads < 1, UnsupportedError for a score other than dot or tanh.
    static AttentionAttrs parse(const Operator& op);
    /// The kernel's parameters for the op's inputs, checked (ShapeError).
    graft_rt::AttentionParams params(const Operator& op) const;
};

}  // namespace graft::ops
