// LSTM at batch 1 split by units over threads (recurrent_parts.cpp), used by lstm.
#pragma once

#include "cpu/kernels.hpp"

namespace graft::cpu::detail {

/// lstm for p.n == 1 with the default activations when pr.parts > 0: pr.w_packed
/// (panels), pr.r_gemv (matrix-vector layout) and pr.b_parts hold W, R and b in part order
/// (rnn_lstm_part_order) and p.u % (4 * pr.parts) == 0.
void lstm_parts(const float* x, float* y, float* h_last, float* c_last, const RnnParams& p, float* work,
                const float* h0, const float* c0, const float* mask, const RnnPrepared& pr);

/// Floats lstm_parts needs beyond rnn_workspace(p, 4): the tile of the last p.t % 8 steps.
std::int64_t lstm_parts_scratch(const RnnParams& p);

}  // namespace graft::cpu::detail
