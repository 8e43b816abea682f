// Recurrent layers (SimpleRNN, LSTM, GRU) with Keras semantics, batch-major x [N,T,I].
//
// The input projection x W (+ input bias) of all timesteps is one GEMM into the workspace;
// each step then only multiplies the state by R. Workspace layout (floats):
//   xp [N*T, G*U] | hr [N, G*U] | h [N, U] | c [N, U] | tmp [N, U] (| hp | cp | o [N, U] with a mask)
#include <cstring>

#include "internal.hpp"

namespace graft::native::kern {
namespace {

using i64 = std::int64_t;

inline std::size_t bytes(i64 n) { return static_cast<std::size_t>(n) * sizeof(float); }

struct Work {
    float *xp, *hr, *h, *c, *tmp;
    float *hp = nullptr, *cp = nullptr, *o = nullptr;  // masked: states before the step, last output
};

Work carve(const RnnParams& p, int gates, float* work) {
    const i64 gu = gates * p.u, nu = p.n * p.u;
    Work w;
    w.xp = work;
    w.hr = w.xp + p.n * p.t * gu;
    w.h = w.hr + p.n * gu;
    w.c = w.h + nu;
    w.tmp = w.c + nu;
    if (p.masked) {
        w.hp = w.tmp + nu;
        w.cp = w.hp + nu;
        w.o = w.cp + nu;
        std::memset(w.o, 0, bytes(nu));
    }
    return w;
}

/// Masked step, before: remember the states.
void mask_save(const RnnParams& p, const float* mask, Work& w) {
    if (!mask) return;
    std::memcpy(w.hp, w.h, bytes(p.n * p.u));
    std::memcpy(w.cp, w.c, bytes(p.n * p.u));
}

/// Masked step, after: rows whose step is masked get their states back; the output follows.
void mask_apply(const RnnParams& p, const float* mask, i64 tt, Work& w) {
    if (!mask) return;
    const std::size_t row = bytes(p.u);
    for (i64 n = 0; n < p.n; ++n) {
        const i64 o = n * p.u;
        if (mask[n * p.t + tt] != 0.f) {
            std::memcpy(w.o + o, w.h + o, row);
        } else {
            std::memcpy(w.h + o, w.hp + o, row);
            std::memcpy(w.c + o, w.cp + o, row);
            if (p.zero_output_for_mask) std::memset(w.o + o, 0, row);
        }
    }
}

/// What a step emits: the state, or with a mask the masked output.
const float* out_of(const float* mask, const Work& w) { return mask ? w.o : w.h; }

void init_state(float* s, const float* s0, i64 count) {
    if (s0)
        std::memcpy(s, s0, bytes(count));
    else
        std::memset(s, 0, bytes(count));
}

/// tanh (sigmoid: (1 + tanh(x/2)) / 2) as a rational function (Eigen's float approximation, a
/// few ulp; saturates beyond +-7.9053): the gates' activations dominate a step. Sixteen lanes
/// at a time in GCC vectors, cloned for AVX-512 / AVX2 and chosen at load time (ifunc).
typedef float v16 __attribute__((vector_size(64)));
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__)) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void fast_tanh(const float* x, float* y, i64 n, bool sigmoid) {
    const float c = 7.90531110763549805f, s = sigmoid ? 0.5f : 1.f;
    i64 i = 0;
    for (; i + 16 <= n; i += 16) {
        v16 v;
        __builtin_memcpy(&v, x + i, sizeof v);
        v = v * s;
        v = v < -c ? -c : v;
        v = v > c ? c : v;
        const v16 v2 = v * v;
        v16 p = v2 * -2.76076847742355e-16f + 2.00018790482477e-13f;
        p = v2 * p + -8.60467152213735e-11f;
        p = v2 * p + 5.12229709037114e-08f;
        p = v2 * p + 1.48572235717979e-05f;
        p = v2 * p + 6.37261928875436e-04f;
        p = v2 * p + 4.89352455891786e-03f;
        v16 q = v2 * 1.19825839466702e-06f + 1.18534705686654e-04f;
        q = v2 * q + 2.26843463243900e-03f;
        q = v2 * q + 4.89352518554385e-03f;
        v16 r = v * p / q;
        if (sigmoid) r = r * 0.5f + 0.5f;
        __builtin_memcpy(y + i, &r, sizeof r);
    }
    for (; i < n; ++i) {
        float v = x[i] * s;
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
        const float r = v * p / q;
        y[i] = sigmoid ? r * 0.5f + 0.5f : r;
    }
}

/// The recurrent activations: fast tanh / sigmoid (= (1 + tanh(x/2)) / 2), else the generic kernel.
inline void rnn_act(const float* x, float* y, i64 n, const ActParams& a) {
    if (a.kind == Act::tanh || a.kind == Act::sigmoid) {
        fast_tanh(x, y, n, a.kind == Act::sigmoid);
    } else {
        activation(x, y, n, a);
    }
}

/// Input projection for all timesteps: xp[N*T, G*U] = x[N*T, I] . W + bias.
void project_inputs(const float* x, const float* W, const float* bias, const RnnParams& p, int gates, float* xp) {
    const i64 gu = gates * p.u;
    detail::gemm(x, p.i, W, gu, xp, gu, p.n * p.t, p.i, gu, bias, false, nullptr);
}

inline i64 time_index(const RnnParams& p, i64 s) { return p.go_backwards ? p.t - 1 - s : s; }

/// Emits the state after processing step s (sequence output), and at the end the final states.
void emit_step(const RnnParams& p, i64 s, const float* h, float* y) {
    if (!p.return_sequences) return;
    for (i64 n = 0; n < p.n; ++n) std::memcpy(y + (n * p.t + s) * p.u, h + n * p.u, bytes(p.u));
}

void emit_final(const RnnParams& p, const float* out, const float* h, float* y, float* h_last) {
    const i64 nu = p.n * p.u;
    if (!p.return_sequences) std::memcpy(y, out, bytes(nu));
    if (h_last) std::memcpy(h_last, h, bytes(nu));
}

}  // namespace

std::int64_t rnn_workspace(const RnnParams& p, int gates) {
    const i64 gu = static_cast<i64>(gates) * p.u;
    return p.n * p.t * gu + p.n * gu + (p.masked ? 6 : 3) * p.n * p.u;
}

void simple_rnn(const float* x, const float* W, const float* R, const float* b, float* y, float* h_last,
                const RnnParams& p, float* work, const float* h0, const float* mask) {
    const i64 U = p.u;
    Work w = carve(p, 1, work);
    project_inputs(x, W, b, p, 1, w.xp);
    init_state(w.h, h0, p.n * U);
    for (i64 s = 0; s < p.t; ++s) {
        const i64 tt = time_index(p, s);
        mask_save(p, mask, w);
        detail::gemm(w.h, U, R, U, w.hr, U, p.n, U, U, nullptr, false, nullptr);
        for (i64 n = 0; n < p.n; ++n) {
            float* z = w.hr + n * U;
            const float* xr = w.xp + (n * p.t + tt) * U;
            for (i64 j = 0; j < U; ++j) z[j] = xr[j] + z[j];
            rnn_act(z, w.h + n * U, U, p.act);
        }
        mask_apply(p, mask, tt, w);
        emit_step(p, s, out_of(mask, w), y);
    }
    emit_final(p, out_of(mask, w), w.h, y, h_last);
}

void lstm(const float* x, const float* W, const float* R, const float* b, float* y, float* h_last, float* c_last,
          const RnnParams& p, float* work, const float* h0, const float* c0, const float* mask) {
    const i64 U = p.u, G = 4 * p.u;
    Work w = carve(p, 4, work);
    project_inputs(x, W, b, p, 4, w.xp);
    init_state(w.h, h0, p.n * U);
    init_state(w.c, c0, p.n * U);
    for (i64 s = 0; s < p.t; ++s) {
        const i64 tt = time_index(p, s);
        mask_save(p, mask, w);
        detail::gemm(w.h, U, R, G, w.hr, G, p.n, U, G, nullptr, false, nullptr);
        for (i64 n = 0; n < p.n; ++n) {
            float* z = w.hr + n * G;
            const float* xr = w.xp + (n * p.t + tt) * G;
            for (i64 j = 0; j < G; ++j) z[j] = xr[j] + z[j];
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
            for (i64 j = 0; j < U; ++j) h[j] = go[j] * h[j];
        }
        mask_apply(p, mask, tt, w);
        emit_step(p, s, out_of(mask, w), y);
    }
    emit_final(p, out_of(mask, w), w.h, y, h_last);
    if (c_last) std::memcpy(c_last, w.c, bytes(p.n * U));
}

void gru(const float* x, const float* W, const float* R, const float* b, bool reset_after, float* y, float* h_last,
         const RnnParams& p, float* work, const float* h0, const float* mask) {
    const i64 U = p.u, G = 3 * p.u;
    Work w = carve(p, 3, work);
    project_inputs(x, W, b, p, 3, w.xp);  // b row 0 (or the only row) is the input bias
    init_state(w.h, h0, p.n * U);
    const float* b_rec = (reset_after && b) ? b + G : nullptr;
    for (i64 s = 0; s < p.t; ++s) {
        const i64 tt = time_index(p, s);
        mask_save(p, mask, w);
        if (reset_after) {
            // hr = h R + b_rec for all three gates.
            detail::gemm(w.h, U, R, G, w.hr, G, p.n, U, G, b_rec, false, nullptr);
        } else {
            // hr[:, z|r] = h R[:, z|r]; the candidate's recurrent part needs r first.
            detail::gemm(w.h, U, R, G, w.hr, G, p.n, U, 2 * U, nullptr, false, nullptr);
        }
        for (i64 n = 0; n < p.n; ++n) {
            float* z = w.hr + n * G;
            const float* xr = w.xp + (n * p.t + tt) * G;
            for (i64 j = 0; j < 2 * U; ++j) z[j] = xr[j] + z[j];
            rnn_act(z, z, 2 * U, p.rec_act);  // z and r
            if (reset_after) {
                const float* r = z + U;
                float* hh = z + 2 * U;
                const float* xh = xr + 2 * U;
                for (i64 j = 0; j < U; ++j) hh[j] = xh[j] + r[j] * hh[j];
            } else {
                const float* r = z + U;
                const float* h = w.h + n * U;
                float* rh = w.tmp + n * U;
                for (i64 j = 0; j < U; ++j) rh[j] = r[j] * h[j];
            }
        }
        if (!reset_after) {
            // hr[:, h] = (r*h) Rh, then add the input part.
            detail::gemm(w.tmp, U, R + 2 * U, G, w.hr + 2 * U, G, p.n, U, U, nullptr, false, nullptr);
            for (i64 n = 0; n < p.n; ++n) {
                float* hh = w.hr + n * G + 2 * U;
                const float* xh = w.xp + (n * p.t + tt) * G + 2 * U;
                for (i64 j = 0; j < U; ++j) hh[j] = xh[j] + hh[j];
            }
        }
        for (i64 n = 0; n < p.n; ++n) {
            const float* zg = w.hr + n * G;
            float* hh = w.hr + n * G + 2 * U;
            float* h = w.h + n * U;
            rnn_act(hh, hh, U, p.act);
            for (i64 j = 0; j < U; ++j) h[j] = zg[j] * h[j] + (1.f - zg[j]) * hh[j];
        }
        mask_apply(p, mask, tt, w);
        emit_step(p, s, out_of(mask, w), y);
    }
    emit_final(p, out_of(mask, w), w.h, y, h_last);
}

}  // namespace graft::native::kern
