// Support sections of the generated code: recurrent layers (SimpleRNN, LSTM, GRU with Keras
// masks), with the semantics of graft's native kernels.
#include "backend/cpp/sections.hpp"
#include "ops/emit_util.hpp"

namespace graft::cpp {

std::vector<Section> sequence_sections() {
    std::vector<Section> s;
    s.push_back({"rnn", {"gemm", "act"}, R"graft(
// ---- recurrent layers ---------------------------------------------------------------------------
// x [N, T, I] batch-major (Keras). The input projection x W + b of every step is one product into
// the workspace; each step then multiplies the state by R. W [I, G*U] and R [U, G*U] are packed
// (gate order: LSTM i, f, c, o; GRU z, r, h). Workspace (floats):
//   xp [N*T, G*U] | hr [N, G*U] | h [N, U] | c [N, U] | tmp [N, U] (| hp | cp | o [N, U] with a mask)
struct Rnn {
    i64 n, t, i, u;
    bool return_sequences;  // y [N, T, U], else y [N, U] (the last step processed)
    bool go_backwards;      // process t = T-1 .. 0; sequences are emitted in processing order (Keras)
    ActParams act, rec_act;
    bool masked;                // a Keras mask [N, T]: a skipped step keeps the states and repeats the output
    bool zero_output_for_mask;  // ... or outputs zeros
};

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

struct RnnWork {
    float *xp, *hr, *h, *c, *tmp, *hp, *cp, *o;
};

inline RnnWork rnn_carve(const Rnn& p, i64 gates, float* work) {
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
    std::memset(w.h, 0, bytes(2 * nu));  // zero initial states h and c
    if (p.masked) std::memset(w.o, 0, bytes(nu));
    return w;
}

/// Masked step, before: remember the states.
inline void rnn_mask_save(const Rnn& p, const float* mask, RnnWork& w) {
    if (!mask) return;
    std::memcpy(w.hp, w.h, bytes(p.n * p.u));
    std::memcpy(w.cp, w.c, bytes(p.n * p.u));
}

/// Masked step, after: rows whose step is masked get their states back; the output follows.
inline void rnn_mask_apply(const Rnn& p, const float* mask, i64 tt, RnnWork& w) {
    if (!mask) return;
    for (i64 n = 0; n < p.n; ++n) {
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

/// After step s: the sequence output; at the end: the final output and state.
inline void rnn_emit_step(const Rnn& p, i64 s, const float* out, float* y) {
    if (!p.return_sequences) return;
    for (i64 n = 0; n < p.n; ++n) std::memcpy(y + (n * p.t + s) * p.u, out + n * p.u, bytes(p.u));
}
inline void rnn_emit_final(const Rnn& p, const float* out, const float* h, float* y, float* h_last) {
    if (!p.return_sequences) std::memcpy(y, out, bytes(p.n * p.u));
    if (h_last) std::memcpy(h_last, h, bytes(p.n * p.u));
}

inline i64 rnn_time(const Rnn& p, i64 s) { return p.go_backwards ? p.t - 1 - s : s; }

/// SimpleRNN: h = act(x W + h R + b).
inline void simple_rnn(const float* x, const float* W, const float* R, const float* b, float* y, float* h_last,
                       const Rnn& p, float* work, const float* mask) {
    const i64 U = p.u;
    RnnWork w = rnn_carve(p, 1, work);
    gemm(p.n * p.t, U, p.i, x, p.i, W, p.i * kPanel, w.xp, U, b, false);
    for (i64 s = 0; s < p.t; ++s) {
        const i64 tt = rnn_time(p, s);
        rnn_mask_save(p, mask, w);
        gemm(p.n, U, U, w.h, U, R, U * kPanel, w.hr, U, nullptr, false);
        for (i64 n = 0; n < p.n; ++n) {
            float* z = w.hr + n * U;
            const float* xr = w.xp + (n * p.t + tt) * U;
            for (i64 j = 0; j < U; ++j) z[j] += xr[j];
            rnn_act(z, w.h + n * U, U, p.act);
        }
        rnn_mask_apply(p, mask, tt, w);
        rnn_emit_step(p, s, mask ? w.o : w.h, y);
    }
    rnn_emit_final(p, mask ? w.o : w.h, w.h, y, h_last);
}

/// LSTM (Keras gate order i, f, c, o).
inline void lstm(const float* x, const float* W, const float* R, const float* b, float* y, float* h_last, float* c_last,
                 const Rnn& p, float* work, const float* mask) {
    const i64 U = p.u, G = 4 * p.u;
    RnnWork w = rnn_carve(p, 4, work);
    gemm(p.n * p.t, G, p.i, x, p.i, W, p.i * kPanel, w.xp, G, b, false);
    for (i64 s = 0; s < p.t; ++s) {
        const i64 tt = rnn_time(p, s);
        rnn_mask_save(p, mask, w);
        gemm(p.n, G, U, w.h, U, R, U * kPanel, w.hr, G, nullptr, false);
        for (i64 n = 0; n < p.n; ++n) {
            float* z = w.hr + n * G;
            const float* xr = w.xp + (n * p.t + tt) * G;
            for (i64 j = 0; j < G; ++j) z[j] += xr[j];
            float* gi = z;
            float* gf = z + U;
            float* gc = z + 2 * U;
            float* go = z + 3 * U;
            rnn_act(gi, gi, 2 * U, p.rec_act);  // i and f are adjacent
            rnn_act(gc, gc, U, p.act);
            rnn_act(go, go, U, p.rec_act);
            float* c = w.c + n * U;
            float* h = w.h + n * U;
            for (i64 j = 0; j < U; ++j) c[j] = gf[j] * c[j] + gi[j] * gc[j];
            rnn_act(c, h, U, p.act);
            for (i64 j = 0; j < U; ++j) h[j] *= go[j];
        }
        rnn_mask_apply(p, mask, tt, w);
        rnn_emit_step(p, s, mask ? w.o : w.h, y);
    }
    rnn_emit_final(p, mask ? w.o : w.h, w.h, y, h_last);
    if (c_last) std::memcpy(c_last, w.c, bytes(p.n * U));
}

/// GRU (Keras gate order z, r, h). reset_after: R_zr is all of R [U, 3U] packed, R_h is unused and
/// b is [2, 3U] (input bias row, recurrent bias row): h~ = act(x Wh + bih + r * (h Rh + bhh)).
/// Otherwise R_zr is R[:, :2U] and R_h is R[:, 2U:], each packed, b is [3U]:
/// h~ = act(x Wh + (r * h) Rh + bh).
inline void gru(const float* x, const float* W, const float* R_zr, const float* R_h, const float* b, bool reset_after,
                float* y, float* h_last, const Rnn& p, float* work, const float* mask) {
    const i64 U = p.u, G = 3 * p.u;
    RnnWork w = rnn_carve(p, 3, work);
    gemm(p.n * p.t, G, p.i, x, p.i, W, p.i * kPanel, w.xp, G, b, false);  // b's first row is the input bias
    const float* b_rec = reset_after && b ? b + G : nullptr;
    for (i64 s = 0; s < p.t; ++s) {
        const i64 tt = rnn_time(p, s);
        rnn_mask_save(p, mask, w);
        if (reset_after) gemm(p.n, G, U, w.h, U, R_zr, U * kPanel, w.hr, G, b_rec, false);
        else gemm(p.n, 2 * U, U, w.h, U, R_zr, U * kPanel, w.hr, G, nullptr, false);
        for (i64 n = 0; n < p.n; ++n) {
            float* z = w.hr + n * G;
            const float* xr = w.xp + (n * p.t + tt) * G;
            for (i64 j = 0; j < 2 * U; ++j) z[j] += xr[j];
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
            float* h = w.h + n * U;
            rnn_act(hh, hh, U, p.act);
            for (i64 j = 0; j < U; ++j) h[j] = zg[j] * h[j] + (1.f - zg[j]) * hh[j];
        }
        rnn_mask_apply(p, mask, tt, w);
        rnn_emit_step(p, s, mask ? w.o : w.h, y);
    }
    rnn_emit_final(p, mask ? w.o : w.h, w.h, y, h_last);
}
)graft"});

    return s;
}

}  // namespace graft::cpp
