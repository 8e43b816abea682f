// The recurrent family: SimpleRNN, LSTM and GRU over x NTC with Keras weight layouts
// (w CN [in, gates*units], r CN [units, gates*units], b C [gates*units], GRU with reset_after
// [2*gates*units]; optional Keras mask NT, initial states h0 (and c0 for LSTM) NC [N, units],
// LSTM peepholes C [3*units] in the order i, f, o). Attributes ONNX needs besides Keras': clip
// (the cell clip, 0 none) and LSTM input_forget. Outputs y (NTC with return_sequences, else NC)
// and, with return_state, h (and c for LSTM). Kernels: graft_rt/recurrent.hpp (the reference, which
// generated code runs) and lib/cpu/recurrent*.cpp (the native backend's, packed and threaded).
#pragma once

#include <cstdint>

#include "graft/ir/operator.hpp"
#include "graft_rt/recurrent.hpp"

namespace graft::ops {

struct RnnAttrs {
    enum class Cell { simple, lstm, gru };
    Cell cell;
    int gates;  // 1, 4 (i, f, c, o) or 3 (z, r, h)
    std::int64_t units;
    graft_rt::ActParams act, rec_act;  // attrs activation (tanh), recurrent_activation (sigmoid)
    bool return_sequences, return_state, go_backwards;
    bool reset_after;           // GRU: b is [2, 3U], the reset gate applies after the product
    bool zero_output_for_mask;  // with a mask: a skipped step outputs zeros, not the last output
    float clip;                 // ONNX cell clip (0: none)
    bool input_forget;          // LSTM: f = 1 - i (ONNX)

    /// UnsupportedError for an unknown activation; ShapeError for a negative clip.
    static RnnAttrs parse(const Operator& op);
    /// The kernels' parameters for the op's inputs, checked (ShapeError).
    graft_rt::RnnParams params(const Operator& op) const;
};

}  // namespace graft::ops
