// graft_rt/conv_lstm.hpp - the convolutional LSTM over NTHWC (Keras ConvLSTM1D/2D; 1-D is h = 1):
// an LSTM whose products are 2-D convolutions, gates i, f, c, o.
#pragma once

#include "graft_rt/act.hpp"
#include "graft_rt/core.hpp"

namespace graft_rt {

/// x NTHWC [n, t, h, w, cin]; w [kh, kw, cin, 4 f] and r [kh, kw, f, 4 f] (Keras kernels, gates
/// i, f, c, o along the last axis), bias [4 f] or null. The input convolution has the strides,
/// dilations and leading pads given; the recurrent one stride 1, dilation 1 and TF's same padding
/// ((k - 1) / 2 before). States h and c are [n, oh, ow, f], zero at the start.
struct ConvLstmParams {
    i64 n, t, h, w, cin;
    i64 kh, kw, filters;
    i64 stride_h, stride_w, dil_h, dil_w, pad_top, pad_left;  // the input convolution
    i64 oh, ow;                                               // the states' size
    bool return_sequences, go_backwards;
    ActParams act, rec_act;  // activation (tanh), recurrent_activation (sigmoid)
};

/// The floats conv_lstm2d's work holds: gates [n, oh, ow, 4 f], h and c [n, oh, ow, f], one row.
inline i64 conv_lstm_workspace(const ConvLstmParams& p) { return p.n * p.oh * p.ow * 6 * p.filters + p.filters; }

/// g [oh, ow, cout] += the convolution of one image x [h, w, cin] with k [kh, kw, cin, cout]
/// (window of output (i, j) at (i * sh - pt, j * sw - pl), taps dh, dw apart; outside: zero).
inline void conv_accumulate(const float* x, i64 h, i64 w, i64 cin, const float* k, i64 kh, i64 kw, i64 cout, i64 sh,
                            i64 sw, i64 dh, i64 dw, i64 pt, i64 pl, float* g, i64 oh, i64 ow) {
    for (i64 i = 0; i < oh; ++i)
        for (i64 j = 0; j < ow; ++j) {
            float* gp = g + (i * ow + j) * cout;
            for (i64 a = 0; a < kh; ++a) {
                const i64 y = i * sh - pt + a * dh;
                if (y < 0 || y >= h) continue;
                for (i64 b = 0; b < kw; ++b) {
                    const i64 xx = j * sw - pl + b * dw;
                    if (xx < 0 || xx >= w) continue;
                    const float* xp = x + (y * w + xx) * cin;
                    const float* kp = k + (a * kw + b) * cin * cout;
                    for (i64 c = 0; c < cin; ++c) {
                        const float v = xp[c];
                        const float* kr = kp + c * cout;
                        for (i64 o = 0; o < cout; ++o) gp[o] += v * kr[o];
                    }
                }
            }
        }
}

/// y: return_sequences NTHWC [n, t, oh, ow, f] (steps in the order processed, as Keras), else the
/// last h [n, oh, ow, f]; h_out, c_out (or null): the final states. work: conv_lstm_workspace.
inline void conv_lstm2d(const float* x, const float* w, const float* r, const float* bias, float* y, float* h_out,
                        float* c_out, const ConvLstmParams& p, float* work) {
    const i64 F = p.filters, G = 4 * F, S = p.oh * p.ow;
    float* gates = work;
    float* hs = gates + p.n * S * G;
    float* cs = hs + p.n * S * F;
    float* row = cs + p.n * S * F;
    for (i64 i = 0; i < 2 * p.n * S * F; ++i) hs[i] = 0.f;  // h and c
    const i64 rpt = (p.kh - 1) / 2, rpl = (p.kw - 1) / 2;
    for (i64 step = 0; step < p.t; ++step) {
        const i64 ts = p.go_backwards ? p.t - 1 - step : step;
        for (i64 n = 0; n < p.n; ++n) {
            float* g = gates + n * S * G;
            float* hn = hs + n * S * F;
            float* cn = cs + n * S * F;
            for (i64 s = 0; s < S; ++s)
                for (i64 o = 0; o < G; ++o) g[s * G + o] = bias ? bias[o] : 0.f;
            conv_accumulate(x + (n * p.t + ts) * p.h * p.w * p.cin, p.h, p.w, p.cin, w, p.kh, p.kw, G, p.stride_h,
                            p.stride_w, p.dil_h, p.dil_w, p.pad_top, p.pad_left, g, p.oh, p.ow);
            conv_accumulate(hn, p.oh, p.ow, F, r, p.kh, p.kw, G, 1, 1, 1, 1, rpt, rpl, g, p.oh, p.ow);
            for (i64 s = 0; s < S; ++s) {
                float* gs = g + s * G;
                activation(gs, gs, F, p.rec_act);                  // i
                activation(gs + F, gs + F, F, p.rec_act);          // f
                activation(gs + 2 * F, gs + 2 * F, F, p.act);      // candidate
                activation(gs + 3 * F, gs + 3 * F, F, p.rec_act);  // o
                float* c = cn + s * F;
                for (i64 o = 0; o < F; ++o) c[o] = gs[F + o] * c[o] + gs[o] * gs[2 * F + o];
                activation(c, row, F, p.act);
                float* hh = hn + s * F;
                for (i64 o = 0; o < F; ++o) hh[o] = gs[3 * F + o] * row[o];
            }
            if (p.return_sequences) copy(hn, y + (n * p.t + step) * S * F, S * F);
        }
    }
    if (!p.return_sequences) copy(hs, y, p.n * S * F);
    if (h_out) copy(hs, h_out, p.n * S * F);
    if (c_out) copy(cs, c_out, p.n * S * F);
}

}  // namespace graft_rt
