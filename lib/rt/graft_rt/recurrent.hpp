// graft_rt/recurrent.hpp - recurrent layers (SimpleRNN, LSTM, GRU with Keras masks, initial
// states and ONNX's LSTM peepholes, cell clip and input_forget) over batch-major x [N, T, I]
// (Keras), and the bookkeeping graft's native recurrent kernels share with them (workspace,
// masks, outputs: the functions taking a range of batch rows [n0, n1)).
//
// The input projection x W + b of every step is one product into the workspace; each step then
// multiplies the state by R. W [I, G*U] and R [U, G*U] are packed for gemm (gate order: LSTM
// i, f, c, o; GRU z, r, h). Workspace (floats), every part indexed by batch row:
//   xp [N*T, G*U] | hr [N, G*U] | h [N, U] | c [N, U] | tmp [N, U] (| hp | cp | o [N, U] with a mask)
#pragma once

#include <cstring>

#include "graft_rt/act.hpp"
#include "graft_rt/core.hpp"
#include "graft_rt/gemm.hpp"

namespace graft_rt {

struct RnnParams {
    i64 n, t, i, u;                 // batch, time steps, input features, units
    bool return_sequences = false;  // y [N, T, U], else y [N, U] (the last step processed)
    bool go_backwards = false;      // process t = T-1 .. 0; sequences are emitted in processing order (Keras)
    ActParams act{Act::tanh};
    ActParams rec_act{Act::sigmoid};
    /// A Keras mask [N, T] (1 = use the step, 0 = skip it): a skipped step keeps the states, and
    /// its output is the previous output (zeros before any step was used) or, with
    /// zero_output_for_mask, zeros (Keras backend.rnn).
    bool masked = false;  // sizes the workspace for a mask
    bool zero_output_for_mask = false;
    /// ONNX's cell clip: every gate's pre-activation (and the c an LSTM's h reads) is clamped to
    /// [-clip, clip] before its activation; 0: none.
    float clip = 0.f;
    /// ONNX LSTM input_forget: the forget gate is 1 - the input gate.
    bool input_forget = false;
};

/// Scratch floats a recurrent layer with `gates` gates needs.
inline i64 rnn_workspace(const RnnParams& p, i64 gates) {
    const i64 gu = gates * p.u;
    return p.n * p.t * gu + p.n * gu + (p.masked ? 6 : 3) * p.n * p.u;
}

/// The parts of the workspace (hp, cp, o: null without a mask): the states h and c, the states
/// before a masked step (hp, cp) and the last output (o).
struct RnnWork {
    float *xp, *hr, *h, *c, *tmp, *hp, *cp, *o;
};

/// Splits `work` (rnn_workspace floats); zeroes the masked output o.
inline RnnWork rnn_carve(const RnnParams& p, i64 gates, float* work) {
    const i64 gu = gates * p.u, nu = p.n * p.u;
    RnnWork w;
    w.xp = work;
    w.hr = w.xp + p.n * p.t * gu;
    w.h = w.hr + p.n * gu;
    w.c = w.h + nu;
    w.tmp = w.c + nu;
    w.hp = p.masked ? w.tmp + nu : nullptr;
    w.cp = p.masked ? w.hp + nu : nullptr;
    w.o = p.masked ? w.cp + nu : nullptr;
    if (p.masked) std::memset(w.o, 0, bytes(nu));
    return w;
}

/// Rows [n0, n1) of state s [N, U] = s0 (null: zeros).
inline void rnn_init_state(float* s, const float* s0, const RnnParams& p, i64 n0, i64 n1) {
    if (s0)
        std::memcpy(s + n0 * p.u, s0 + n0 * p.u, bytes((n1 - n0) * p.u));
    else
        std::memset(s + n0 * p.u, 0, bytes((n1 - n0) * p.u));
}

/// The time index of processing step s.
inline i64 rnn_time(const RnnParams& p, i64 s) { return p.go_backwards ? p.t - 1 - s : s; }

/// Masked step, before: remember the states of rows [n0, n1).
inline void rnn_mask_save(const RnnParams& p, const float* mask, RnnWork& w, i64 n0, i64 n1) {
    if (!mask) return;
    std::memcpy(w.hp + n0 * p.u, w.h + n0 * p.u, bytes((n1 - n0) * p.u));
    std::memcpy(w.cp + n0 * p.u, w.c + n0 * p.u, bytes((n1 - n0) * p.u));
}

/// Masked step (time tt), after: rows whose step is masked get their states back; the output follows.
inline void rnn_mask_apply(const RnnParams& p, const float* mask, i64 tt, RnnWork& w, i64 n0, i64 n1) {
    if (!mask) return;
    for (i64 n = n0; n < n1; ++n) {
        const i64 o = n * p.u;
        if (mask[n * p.t + tt] != 0.f) {
            std::memcpy(w.o + o, w.h + o, bytes(p.u));
        } else {
            std::memcpy(w.h + o, w.hp + o, bytes(p.u));
            std::memcpy(w.c + o, w.cp + o, bytes(p.u));
            if (p.zero_output_for_mask) std::memset(w.o + o, 0, bytes(p.u));
        }
    }
}

/// What a step outputs: the state h, or with a mask the masked output.
inline const float* rnn_output(const float* mask, const RnnWork& w) { return mask ? w.o : w.h; }

/// After step s: rows [n0, n1) of the sequence output.
inline void rnn_emit_step(const RnnParams& p, i64 s, const float* out, float* y, i64 n0, i64 n1) {
    if (!p.return_sequences) return;
    for (i64 n = n0; n < n1; ++n) std::memcpy(y + (n * p.t + s) * p.u, out + n * p.u, bytes(p.u));
}

/// At the end: rows [n0, n1) of the final output and of the last state (h_last may be null).
inline void rnn_emit_final(const RnnParams& p, const float* out, const float* h, float* y, float* h_last, i64 n0,
                           i64 n1) {
    const i64 o = n0 * p.u, count = (n1 - n0) * p.u;
    if (!p.return_sequences) std::memcpy(y + o, out + o, bytes(count));
    if (h_last) std::memcpy(h_last + o, h + o, bytes(count));
}

/// The time loop of a recurrent layer on rows [n0, n1): for each step, the masked rows' states
/// are saved, step(tt) runs the cell at time tt, masked rows get their states back and the step's
/// output is emitted; at the end the final output and the last h (h_last may be null).
template <class Step>
inline void rnn_steps(const RnnParams& p, const float* mask, RnnWork& w, float* y, float* h_last, i64 n0, i64 n1,
                      Step step) {
    for (i64 s = 0; s < p.t; ++s) {
        const i64 tt = rnn_time(p, s);
        rnn_mask_save(p, mask, w, n0, n1);
        step(tt);
        rnn_mask_apply(p, mask, tt, w, n0, n1);
        rnn_emit_step(p, s, rnn_output(mask, w), y, n0, n1);
    }
    rnn_emit_final(p, rnn_output(mask, w), w.h, y, h_last, n0, n1);
}

/// ONNX's cell clip on n pre-activations (nothing when p.clip is 0).
inline void rnn_clip(float* v, i64 n, const RnnParams& p) {
    if (p.clip <= 0.f) return;
    for (i64 i = 0; i < n; ++i) v[i] = v[i] < -p.clip ? -p.clip : (v[i] > p.clip ? p.clip : v[i]);
}

/// tanh as a rational function (Eigen's float approximation, as graft's native kernels use: a few
/// ulp, saturating beyond +-7.9053), written so the compiler vectorizes it: the gates' activations
/// dominate a step.
inline void fast_tanh(const float* x, float* y, i64 n) {
    for (i64 i = 0; i < n; ++i) {
        const float c = 7.90531110763549805f;
        float v = x[i];
        v = v < -c ? -c : (v > c ? c : v);
        const float v2 = v * v;
        float p = v2 * -2.76076847742355e-16f + 2.00018790482477e-13f;
        p = v2 * p + -8.60467152213735e-11f;
        p = v2 * p + 5.12229709037114e-08f;
        p = v2 * p + 1.48572235717979e-05f;
        p = v2 * p + 6.37261928875436e-04f;
        p = v2 * p + 4.89352455891786e-03f;
        float q = v2 * 1.19825839466702e-06f + 1.18534705686654e-04f;
        q = v2 * q + 2.26843463243900e-03f;
        q = v2 * q + 4.89352518554385e-03f;
        y[i] = v * p / q;
    }
}

/// The recurrent activations: tanh, and sigmoid as (1 + tanh(x / 2)) / 2, fast; others as activation().
inline void rnn_act(const float* x, float* y, i64 n, const ActParams& a) {
    if (a.kind == Act::tanh) {
        fast_tanh(x, y, n);
    } else if (a.kind == Act::sigmoid) {
        for (i64 i = 0; i < n; ++i) y[i] = 0.5f * x[i];
        fast_tanh(y, y, n);
        for (i64 i = 0; i < n; ++i) y[i] = 0.5f * y[i] + 0.5f;
    } else {
        activation(x, y, n, a);
    }
}

/// One row of an LSTM step: z = [i | f | c | o] pre-activations (4U floats, activated in place),
/// the state c (U) updated to f * c + i * c~ and h (U) = o * act(c). act(x, y, n, params) runs an
/// activation over n floats (rnn_act here; graft's native kernels pass their vectorized one).
/// Peepholes pp = [pi | pf | po] (U each, null: none) add pi * c and pf * c (the previous c) to
/// i and f, po * c (the new c) to o (ONNX). p.clip clamps the pre-activations and the c that h
/// reads (not the state); p.input_forget makes f = 1 - i.
template <class ActFn>
inline void rnn_lstm_cell(float* z, float* c, float* h, const float* pp, i64 U, const RnnParams& p, ActFn act) {
    float* gi = z;
    float* gf = z + U;
    float* gc = z + 2 * U;
    float* go = z + 3 * U;
    if (pp)
        for (i64 j = 0; j < U; ++j) gi[j] += pp[j] * c[j], gf[j] += pp[U + j] * c[j];
    rnn_clip(gi, 3 * U, p);         // i, f and c~; o once its peephole is in
    act(gi, gi, 2 * U, p.rec_act);  // i and f are adjacent
    if (p.input_forget)
        for (i64 j = 0; j < U; ++j) gf[j] = 1.f - gi[j];
    act(gc, gc, U, p.act);
    for (i64 j = 0; j < U; ++j) c[j] = gf[j] * c[j] + gi[j] * gc[j];
    if (pp)
        for (i64 j = 0; j < U; ++j) go[j] += pp[2 * U + j] * c[j];
    rnn_clip(go, U, p);
    act(go, go, U, p.rec_act);
    std::memcpy(h, c, bytes(U));
    rnn_clip(h, U, p);
    act(h, h, U, p.act);
    for (i64 j = 0; j < U; ++j) h[j] *= go[j];
}

/// The end of a GRU step on one row: h = zg * h + (1 - zg) * act(hh), zg the activated update
/// gate, hh the candidate's pre-activation (clipped and activated in place); U floats each.
template <class ActFn>
inline void rnn_gru_blend(const float* zg, float* hh, float* h, i64 U, const RnnParams& p, ActFn act) {
    rnn_clip(hh, U, p);
    act(hh, hh, U, p.act);
    for (i64 j = 0; j < U; ++j) h[j] = zg[j] * h[j] + (1.f - zg[j]) * hh[j];
}

/// The pre-activations of step tt for every row: w.hr [N, gu] = h R (R packed) + the step's rows
/// of the input projection w.xp.
inline void rnn_preactivations(const RnnParams& p, RnnWork& w, const float* R, i64 gu, i64 tt) {
    gemm(p.n, gu, p.u, w.h, p.u, R, p.u * kPanel, w.hr, gu, nullptr, false);
    for (i64 n = 0; n < p.n; ++n) {
        float* z = w.hr + n * gu;
        const float* xr = w.xp + (n * p.t + tt) * gu;
        for (i64 j = 0; j < gu; ++j) z[j] += xr[j];
    }
}

/// SimpleRNN: h = act(x W + h R + b); b [U] or null. The initial state h0 [N, U] may be null
/// (zeros); mask [N, T] or null; h_last may be null.
inline void simple_rnn(const float* x, const float* W, const float* R, const float* b, const float* h0, float* y,
                       float* h_last, const RnnParams& p, float* work, const float* mask) {
    const i64 U = p.u;
    RnnWork w = rnn_carve(p, 1, work);
    rnn_init_state(w.h, h0, p, 0, p.n);
    gemm(p.n * p.t, U, p.i, x, p.i, W, p.i * kPanel, w.xp, U, b, false);
    rnn_steps(p, mask, w, y, h_last, 0, p.n, [&](i64 tt) {
        rnn_preactivations(p, w, R, U, tt);
        rnn_clip(w.hr, p.n * U, p);
        for (i64 n = 0; n < p.n; ++n) rnn_act(w.hr + n * U, w.h + n * U, U, p.act);
    });
}

/// LSTM (Keras gate order i, f, c, o); b [4U] or null; peepholes pp [3U] (i, f, o) or null;
/// initial states h0, c0 [N, U] or null. c_last may be null.
inline void lstm(const float* x, const float* W, const float* R, const float* b, const float* pp, const float* h0,
                 const float* c0, float* y, float* h_last, float* c_last, const RnnParams& p, float* work,
                 const float* mask) {
    const i64 U = p.u, G = 4 * p.u;
    RnnWork w = rnn_carve(p, 4, work);
    rnn_init_state(w.h, h0, p, 0, p.n);
    rnn_init_state(w.c, c0, p, 0, p.n);
    gemm(p.n * p.t, G, p.i, x, p.i, W, p.i * kPanel, w.xp, G, b, false);
    rnn_steps(p, mask, w, y, h_last, 0, p.n, [&](i64 tt) {
        rnn_preactivations(p, w, R, G, tt);
        for (i64 n = 0; n < p.n; ++n) rnn_lstm_cell(w.hr + n * G, w.c + n * U, w.h + n * U, pp, U, p, rnn_act);
    });
    if (c_last) std::memcpy(c_last, w.c, bytes(p.n * U));
}

/// GRU (Keras gate order z, r, h). reset_after: R_zr is all of R [U, 3U] packed, R_h is unused and
/// b is [2, 3U] (input bias row, recurrent bias row): h~ = act(x Wh + bih + r * (h Rh + bhh)).
/// Otherwise R_zr is R[:, :2U] and R_h is R[:, 2U:], each packed, b is [3U]:
/// h~ = act(x Wh + (r * h) Rh + bh). The initial state h0 [N, U] may be null (zeros).
inline void gru(const float* x, const float* W, const float* R_zr, const float* R_h, const float* b, bool reset_after,
                const float* h0, float* y, float* h_last, const RnnParams& p, float* work, const float* mask) {
    const i64 U = p.u, G = 3 * p.u;
    RnnWork w = rnn_carve(p, 3, work);
    rnn_init_state(w.h, h0, p, 0, p.n);
    gemm(p.n * p.t, G, p.i, x, p.i, W, p.i * kPanel, w.xp, G, b, false);  // b's first row is the input bias
    const float* b_rec = reset_after && b ? b + G : nullptr;
    rnn_steps(p, mask, w, y, h_last, 0, p.n, [&](i64 tt) {
        if (reset_after)
            gemm(p.n, G, U, w.h, U, R_zr, U * kPanel, w.hr, G, b_rec, false);
        else
            gemm(p.n, 2 * U, U, w.h, U, R_zr, U * kPanel, w.hr, G, nullptr, false);
        for (i64 n = 0; n < p.n; ++n) {
            float* z = w.hr + n * G;
            const float* xr = w.xp + (n * p.t + tt) * G;
            for (i64 j = 0; j < 2 * U; ++j) z[j] += xr[j];
            rnn_clip(z, 2 * U, p);
            rnn_act(z, z, 2 * U, p.rec_act);  // z and r
            const float* r = z + U;
            if (reset_after) {
                float* hh = z + 2 * U;
                for (i64 j = 0; j < U; ++j) hh[j] = xr[2 * U + j] + r[j] * hh[j];
            } else {
                const float* h = w.h + n * U;
                for (i64 j = 0; j < U; ++j) w.tmp[n * U + j] = r[j] * h[j];
            }
        }
        if (!reset_after) {
            gemm(p.n, U, U, w.tmp, U, R_h, U * kPanel, w.hr + 2 * U, G, nullptr, false);
            for (i64 n = 0; n < p.n; ++n)
                for (i64 j = 0; j < U; ++j) w.hr[n * G + 2 * U + j] += w.xp[(n * p.t + tt) * G + 2 * U + j];
        }
        for (i64 n = 0; n < p.n; ++n) {
            const float* zg = w.hr + n * G;
            float* hh = w.hr + n * G + 2 * U;
            rnn_gru_blend(zg, hh, w.h + n * U, U, p, rnn_act);
        }
    });
}

}  // namespace graft_rt
