// Support sections of the generated code: the blocked matrix product and what is built on it
// (Dense, batched products, 2-D / 3-D / depthwise / transposed convolutions). The loop structure
// mirrors graft's native GEMM: B prepacked into column panels of 16, k in blocks, register tiles of
// rows x 16 columns whose accumulators the compiler keeps in vector registers (-O2 -march=native).
#include "backend/cpp/sections.hpp"
#include "ops/emit_util.hpp"

namespace graft::cpp {

std::vector<Section> gemm_sections() {
    std::vector<Section> s;
    s.push_back({"gemm", {"core"}, R"graft(
// ---- matrix product ---------------------------------------------------------------------------
// B operands are packed: a K x N matrix as column panels of kPanel columns, panel p holding
// columns p*16 .. p*16+15 of row k at b[p * panel_stride + k * 16 + j], zero padded past N.
// Constant weights are packed when the code is generated; pack_panels does it at run time.
constexpr i64 kPanel = 16;    // columns per panel
constexpr i64 kKBlock = 256;  // k per block, so a tile's rows of A stay in L1
// Register tiles: rows x panels of accumulators, sized for the vector registers the compiler
// targets (-march): enough independent FMA chains to hide their latency, without spilling.
#if defined(__AVX512F__)
constexpr i64 kTileRows = 8;     // 32 registers of 16 floats: 8 x 32 accumulators
constexpr int kTilePanels = 2;
#else
constexpr i64 kTileRows = 6;     // AVX2 / SSE / NEON (16 registers): 6 x 16 accumulators
constexpr int kTilePanels = 1;
#endif

inline i64 packed_floats(i64 K, i64 N) { return (N + kPanel - 1) / kPanel * kPanel * K; }

/// Packs row-major w [K, N] (row stride ldw) into panels at `out` (packed_floats(K, N) floats).
inline void pack_panels(const float* w, i64 ldw, i64 K, i64 N, float* out) {
    for (i64 p = 0; p * kPanel < N; ++p) {
        const i64 n0 = p * kPanel, cols = std::min(kPanel, N - n0);
        for (i64 k = 0; k < K; ++k) {
            float* dst = out + (p * K + k) * kPanel;
            for (i64 j = 0; j < kPanel; ++j) dst[j] = j < cols ? w[k * ldw + n0 + j] : 0.f;
        }
    }
}

/// One register tile: R rows x P panels of C (P * 16 columns, `cols` of them valid) over kc values
/// of k; B's panels are bps floats apart. Starts from C (load_c), else from bias (or zero).
template <int R, int P>
inline void gemm_tile(const float* a, i64 lda, const float* b, i64 bps, float* c, i64 ldc, i64 kc, i64 cols, bool load_c,
                      const float* bias) {
    constexpr i64 W = P * kPanel;
    float acc[R][W];
    if (cols == W) {
#pragma GCC unroll 16
        for (int r = 0; r < R; ++r)
            for (i64 j = 0; j < W; ++j) acc[r][j] = load_c ? c[r * ldc + j] : bias ? bias[j] : 0.f;
    } else {
        for (int r = 0; r < R; ++r)
            for (i64 j = 0; j < W; ++j) acc[r][j] = j >= cols ? 0.f : load_c ? c[r * ldc + j] : bias ? bias[j] : 0.f;
    }
    for (i64 k = 0; k < kc; ++k) {
#pragma GCC unroll 16  // (g++ and clang++) R x P independent chains of vector FMAs in flight
        for (int r = 0; r < R; ++r) {
            const float av = a[r * lda + k];
#pragma GCC unroll 4
            for (int q = 0; q < P; ++q) {
                const float* bk = b + q * bps + k * kPanel;
                for (i64 j = 0; j < kPanel; ++j) acc[r][q * kPanel + j] += av * bk[j];
            }
        }
    }
    if (cols == W) {
#pragma GCC unroll 16
        for (int r = 0; r < R; ++r)
            for (i64 j = 0; j < W; ++j) c[r * ldc + j] = acc[r][j];
    } else {
        for (int r = 0; r < R; ++r)
            for (i64 j = 0; j < cols; ++j) c[r * ldc + j] = acc[r][j];
    }
}

/// R rows of C across all N columns: groups of P panels (fewer rows, more panels, so that
/// enough independent accumulators are in flight), halving P for the last panels.
template <int R>
inline void gemm_rows(const float* a, i64 lda, const float* B, i64 bps, float* c, i64 ldc, i64 kc, i64 N, bool load_c,
                      const float* bias) {
    constexpr int kP = R == 1 ? 4 : R <= 3 ? 2 : kTilePanels;
    const i64 panels = (N + kPanel - 1) / kPanel;
    for (i64 p = 0; p < panels;) {
        const i64 n0 = p * kPanel;
        const float* b = B + p * bps;
        const float* bias_p = bias ? bias + n0 : nullptr;
        if (kP >= 4 && p + 4 <= panels) {
            gemm_tile<R, (kP >= 4 ? 4 : 1)>(a, lda, b, bps, c + n0, ldc, kc, std::min<i64>(4 * kPanel, N - n0), load_c, bias_p);
            p += 4;
        } else if (kP >= 2 && p + 2 <= panels) {
            gemm_tile<R, (kP >= 2 ? 2 : 1)>(a, lda, b, bps, c + n0, ldc, kc, std::min<i64>(2 * kPanel, N - n0), load_c, bias_p);
            p += 2;
        } else {
            gemm_tile<R, 1>(a, lda, b, bps, c + n0, ldc, kc, std::min<i64>(kPanel, N - n0), load_c, bias_p);
            p += 1;
        }
    }
}

/// C[M, N] = A[M, K] . B + bias (bias [N] or null), or C += A . B when `accumulate`.
/// A and C are row-major with row strides lda and ldc; B is packed with panel stride bps
/// (K * kPanel for a whole matrix; B may also point at row k0 of a larger packed matrix).
/// Loops: k blocks of kKBlock, then tiles of kTileRows rows, then groups of panels.
inline void gemm(i64 M, i64 N, i64 K, const float* A, i64 lda, const float* B, i64 bps, float* C, i64 ldc,
                 const float* bias, bool accumulate) {
    if (K == 0 && !accumulate)
        for (i64 m = 0; m < M; ++m)
            for (i64 n = 0; n < N; ++n) C[m * ldc + n] = bias ? bias[n] : 0.f;
    for (i64 k0 = 0; k0 < K; k0 += kKBlock) {
        const i64 kc = std::min(kKBlock, K - k0);
        const bool load_c = accumulate || k0 > 0;
        const float* b = B + k0 * kPanel;
        for (i64 m = 0; m < M; m += kTileRows) {
            const float* a = A + m * lda + k0;
            float* c = C + m * ldc;
            switch (std::min(kTileRows, M - m)) {
                case 8: gemm_rows<8>(a, lda, b, bps, c, ldc, kc, N, load_c, bias); break;
                case 7: gemm_rows<7>(a, lda, b, bps, c, ldc, kc, N, load_c, bias); break;
                case 6: gemm_rows<6>(a, lda, b, bps, c, ldc, kc, N, load_c, bias); break;
                case 5: gemm_rows<5>(a, lda, b, bps, c, ldc, kc, N, load_c, bias); break;
                case 4: gemm_rows<4>(a, lda, b, bps, c, ldc, kc, N, load_c, bias); break;
                case 3: gemm_rows<3>(a, lda, b, bps, c, ldc, kc, N, load_c, bias); break;
                case 2: gemm_rows<2>(a, lda, b, bps, c, ldc, kc, N, load_c, bias); break;
                default: gemm_rows<1>(a, lda, b, bps, c, ldc, kc, N, load_c, bias); break;
            }
        }
    }
}
)graft"});

    s.push_back({"dense", {"gemm", "act"}, R"graft(
/// y[M, N] = act(x[M, K] . w + bias); w packed (Keras Dense kernel [K, N]), bias [N] or null.
inline void dense(const float* x, const float* w, const float* bias, float* y, i64 M, i64 K, i64 N, const ActParams& act) {
    gemm(M, N, K, x, K, w, K * kPanel, y, N, bias, false);
    if (act.kind != Act::linear) activation(y, y, M * N, act);
}
)graft"});

    s.push_back({"batch_matmul", {"gemm"}, R"graft(
/// y[b] = x[b] . w[b] for x [B, M, K], w [B, K, N], y [B, M, N]; work: packed_floats(K, N) floats.
inline void batch_matmul(const float* x, const float* w, float* y, i64 B, i64 M, i64 K, i64 N, float* work) {
    for (i64 b = 0; b < B; ++b) {
        pack_panels(w + b * K * N, N, K, N, work);
        gemm(M, N, K, x + b * M * K, K, work, K * kPanel, y + b * M * N, N, nullptr, false);
    }
}
)graft"});

    s.push_back({"conv_common", {"core"}, R"graft(
/// Output positions o in [0, out) whose input coordinate o * stride + offset lies in [0, in): [lo, hi).
inline void valid_range(i64 offset, i64 stride, i64 in, i64 out, i64& lo, i64& hi) {
    lo = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
    const i64 last = in - 1 - offset;
    hi = last < 0 ? 0 : std::min(out, last / stride + 1);
    if (lo > hi) lo = hi;
}

/// Every output row starts from the bias (or zero).
inline void fill_bias(float* y, const float* bias, i64 pixels, i64 channels) {
    for (i64 i = 0; i < pixels; ++i)
        for (i64 c = 0; c < channels; ++c) y[i * channels + c] = bias ? bias[c] : 0.f;
}
)graft"});

    s.push_back({"conv2d", {"gemm", "act", "conv_common"}, R"graft(
/// Geometry of a 2-D convolution over NHWC (1-D: h = kh = 1). Padding is explicit: the leading
/// pads; the rest follows from the output size. Out-of-range taps read zero.
struct Conv2D {
    i64 n, h, w, cin;
    i64 kh, kw, cout;
    i64 stride_h, stride_w, dil_h, dil_w;
    i64 pad_top, pad_left;
    i64 oh, ow;
    i64 block_rows;  // output rows per product (their im2col patches fit `work`); 0: tap by tap
};

/// y [N, OH, OW, Cout] = act(conv(x [N, H, W, Cin], w) + bias) with w the Keras kernel
/// [KH, KW, Cin, Cout] viewed as a [KH*KW*Cin, Cout] matrix and packed (an implicit GEMM).
/// With block_rows, the patches of block_rows output rows are copied into `work`
/// (block_rows * OW * KH*KW*Cin floats) and multiplied at once; otherwise every tap in range is
/// a product of strided input rows accumulated into the output row.
inline void conv2d_nhwc(const float* x, const float* w, const float* bias, float* y, const Conv2D& p,
                        const ActParams& act, float* work) {
    const i64 K = p.kh * p.kw * p.cin, bps = K * kPanel, row = p.ow * p.cout;
    const bool pointwise = p.kh == 1 && p.kw == 1 && p.stride_h == 1 && p.stride_w == 1 && p.pad_top == 0 &&
                           p.pad_left == 0 && p.oh == p.h && p.ow == p.w;
    if (pointwise) {  // a 1x1 convolution is one matrix product over all pixels
        gemm(p.n * p.h * p.w, p.cout, p.cin, x, p.cin, w, bps, y, p.cout, bias, false);
        if (act.kind != Act::linear) activation(y, y, p.n * p.oh * row, act);
        return;
    }
    for (i64 n = 0; n < p.n; ++n) {
        const float* xn = x + n * p.h * p.w * p.cin;
        if (p.block_rows > 0) {
            for (i64 oh0 = 0; oh0 < p.oh; oh0 += p.block_rows) {
                const i64 rows = std::min(p.block_rows, p.oh - oh0);
                float* dst = work;
                for (i64 oh = oh0; oh < oh0 + rows; ++oh)
                    for (i64 ow = 0; ow < p.ow; ++ow)
                        for (i64 kh = 0; kh < p.kh; ++kh) {
                            const i64 ih = oh * p.stride_h - p.pad_top + kh * p.dil_h;
                            for (i64 kw = 0; kw < p.kw; ++kw, dst += p.cin) {
                                const i64 iw = ow * p.stride_w - p.pad_left + kw * p.dil_w;
                                if (ih >= 0 && ih < p.h && iw >= 0 && iw < p.w)
                                    std::memcpy(dst, xn + (ih * p.w + iw) * p.cin, bytes(p.cin));
                                else
                                    std::memset(dst, 0, bytes(p.cin));
                            }
                        }
                float* yr = y + (n * p.oh + oh0) * row;
                gemm(rows * p.ow, p.cout, K, work, K, w, bps, yr, p.cout, bias, false);
                if (act.kind != Act::linear) activation(yr, yr, rows * row, act);
            }
            continue;
        }
        for (i64 oh = 0; oh < p.oh; ++oh) {
            float* yr = y + (n * p.oh + oh) * row;
            fill_bias(yr, bias, p.ow, p.cout);
            for (i64 kh = 0; kh < p.kh; ++kh) {
                const i64 ih = oh * p.stride_h - p.pad_top + kh * p.dil_h;
                if (ih < 0 || ih >= p.h) continue;
                for (i64 kw = 0; kw < p.kw; ++kw) {
                    const i64 offset = kw * p.dil_w - p.pad_left;
                    i64 lo, hi;
                    valid_range(offset, p.stride_w, p.w, p.ow, lo, hi);
                    if (lo >= hi) continue;
                    const float* xs = xn + (ih * p.w + lo * p.stride_w + offset) * p.cin;
                    const float* ws = w + (kh * p.kw + kw) * p.cin * kPanel;  // this tap's rows of w
                    gemm(hi - lo, p.cout, p.cin, xs, p.stride_w * p.cin, ws, bps, yr + lo * p.cout, p.cout, nullptr, true);
                }
            }
            if (act.kind != Act::linear) activation(yr, yr, row, act);
        }
    }
}
)graft"});

    s.push_back({"conv3d", {"gemm", "act", "conv_common"}, R"graft(
struct Conv3D {
    i64 n, d, h, w, cin;
    i64 kd, kh, kw, cout;
    i64 stride_d, stride_h, stride_w, dil_d, dil_h, dil_w;
    i64 pad_front, pad_top, pad_left;
    i64 od, oh, ow;
};

/// y [N, OD, OH, OW, Cout] = act(conv(x [N, D, H, W, Cin], w) + bias), w [KD, KH, KW, Cin, Cout]
/// packed as a [KD*KH*KW*Cin, Cout] matrix; every tap in range accumulates into an output row.
inline void conv3d_ndhwc(const float* x, const float* w, const float* bias, float* y, const Conv3D& p,
                         const ActParams& act) {
    const i64 K = p.kd * p.kh * p.kw * p.cin, bps = K * kPanel, row = p.ow * p.cout;
    for (i64 n = 0; n < p.n; ++n) {
        const float* xn = x + n * p.d * p.h * p.w * p.cin;
        for (i64 od = 0; od < p.od; ++od)
            for (i64 oh = 0; oh < p.oh; ++oh) {
                float* yr = y + ((n * p.od + od) * p.oh + oh) * row;
                fill_bias(yr, bias, p.ow, p.cout);
                for (i64 kd = 0; kd < p.kd; ++kd) {
                    const i64 id = od * p.stride_d - p.pad_front + kd * p.dil_d;
                    if (id < 0 || id >= p.d) continue;
                    for (i64 kh = 0; kh < p.kh; ++kh) {
                        const i64 ih = oh * p.stride_h - p.pad_top + kh * p.dil_h;
                        if (ih < 0 || ih >= p.h) continue;
                        for (i64 kw = 0; kw < p.kw; ++kw) {
                            const i64 offset = kw * p.dil_w - p.pad_left;
                            i64 lo, hi;
                            valid_range(offset, p.stride_w, p.w, p.ow, lo, hi);
                            if (lo >= hi) continue;
                            const float* xs = xn + ((id * p.h + ih) * p.w + lo * p.stride_w + offset) * p.cin;
                            const float* ws = w + ((kd * p.kh + kh) * p.kw + kw) * p.cin * kPanel;
                            gemm(hi - lo, p.cout, p.cin, xs, p.stride_w * p.cin, ws, bps, yr + lo * p.cout, p.cout, nullptr,
                                 true);
                        }
                    }
                }
                if (act.kind != Act::linear) activation(yr, yr, row, act);
            }
    }
}
)graft"});

    s.push_back({"depthwise2d", {"act", "conv_common"}, R"graft(
struct Depthwise2D {
    i64 n, h, w, cin, mult;
    i64 kh, kw;
    i64 stride_h, stride_w, dil_h, dil_w;
    i64 pad_top, pad_left;
    i64 oh, ow;
};

/// Depthwise convolution over NHWC: w [KH, KW, Cin, M] (Keras), bias [Cin*M] or null, output
/// channel c*M + m.
inline void depthwise2d_nhwc(const float* x, const float* w, const float* bias, float* y, const Depthwise2D& p,
                             const ActParams& act) {
    const i64 cout = p.cin * p.mult;
    for (i64 n = 0; n < p.n; ++n) {
        const float* xn = x + n * p.h * p.w * p.cin;
        for (i64 oh = 0; oh < p.oh; ++oh) {
            float* yr = y + (n * p.oh + oh) * p.ow * cout;
            fill_bias(yr, bias, p.ow, cout);
            for (i64 ow = 0; ow < p.ow; ++ow) {
                float* yp = yr + ow * cout;
                for (i64 kh = 0; kh < p.kh; ++kh) {
                    const i64 ih = oh * p.stride_h - p.pad_top + kh * p.dil_h;
                    if (ih < 0 || ih >= p.h) continue;
                    for (i64 kw = 0; kw < p.kw; ++kw) {
                        const i64 iw = ow * p.stride_w - p.pad_left + kw * p.dil_w;
                        if (iw < 0 || iw >= p.w) continue;
                        const float* xp = xn + (ih * p.w + iw) * p.cin;
                        const float* wp = w + (kh * p.kw + kw) * cout;
                        for (i64 c = 0; c < p.cin; ++c)
                            for (i64 m = 0; m < p.mult; ++m) yp[c * p.mult + m] += xp[c] * wp[c * p.mult + m];
                    }
                }
            }
            if (act.kind != Act::linear) activation(yr, yr, p.ow * cout, act);
        }
    }
}
)graft"});

    s.push_back({"conv_transpose", {"act", "conv_common"}, R"graft(
struct ConvTranspose {
    i64 n, d, h, w, cin;
    i64 kd, kh, kw, cout;
    i64 stride_d, stride_h, stride_w, dil_d, dil_h, dil_w;
    i64 pad_front, pad_top, pad_left;
    i64 od, oh, ow;
};

/// Transposed convolution over NDHWC (2-D and 1-D: D = 1, and H = 1), w [KD, KH, KW, Cout, Cin]
/// (Keras). A gather: output o sums the taps k and inputs i with i*stride - pad + k*dil == o.
inline void conv_transpose_ndhwc(const float* x, const float* w, const float* bias, float* y, const ConvTranspose& p,
                                 const ActParams& act) {
    for (i64 n = 0; n < p.n; ++n) {
        const float* xn = x + n * p.d * p.h * p.w * p.cin;
        for (i64 od = 0; od < p.od; ++od)
            for (i64 oh = 0; oh < p.oh; ++oh) {
                float* yr = y + ((n * p.od + od) * p.oh + oh) * p.ow * p.cout;
                fill_bias(yr, bias, p.ow, p.cout);
                for (i64 ow = 0; ow < p.ow; ++ow) {
                    float* yp = yr + ow * p.cout;
                    for (i64 kd = 0; kd < p.kd; ++kd) {
                        const i64 td = od + p.pad_front - kd * p.dil_d;
                        if (td < 0 || td % p.stride_d != 0 || td / p.stride_d >= p.d) continue;
                        for (i64 kh = 0; kh < p.kh; ++kh) {
                            const i64 th = oh + p.pad_top - kh * p.dil_h;
                            if (th < 0 || th % p.stride_h != 0 || th / p.stride_h >= p.h) continue;
                            for (i64 kw = 0; kw < p.kw; ++kw) {
                                const i64 tw = ow + p.pad_left - kw * p.dil_w;
                                if (tw < 0 || tw % p.stride_w != 0 || tw / p.stride_w >= p.w) continue;
                                const i64 id = td / p.stride_d, ih = th / p.stride_h, iw = tw / p.stride_w;
                                const float* xp = xn + ((id * p.h + ih) * p.w + iw) * p.cin;
                                const float* wk = w + ((kd * p.kh + kh) * p.kw + kw) * p.cout * p.cin;
                                for (i64 co = 0; co < p.cout; ++co) {
                                    float acc = 0.f;
                                    for (i64 ci = 0; ci < p.cin; ++ci) acc += wk[co * p.cin + ci] * xp[ci];
                                    yp[co] += acc;
                                }
                            }
                        }
                    }
                }
                if (act.kind != Act::linear) activation(yr, yr, p.ow * p.cout, act);
            }
    }
}
)graft"});
    return s;
}

}  // namespace graft::cpp
