// Native CPU kernels: plain functions over float buffers, free of the IR.
//
// The native backend binds IR operators to these at compile time. Every kernel takes raw
// pointers and sizes that were checked when the graph was compiled, allocates nothing and
// does no virtual call per element. Layouts are stated per kernel; the optimizer's layout
// pass guarantees them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "graft_rt/act.hpp"
#include "graft_rt/conv.hpp"
#include "graft_rt/depthwise.hpp"
#include "graft_rt/pool.hpp"
#include "graft_rt/recurrent.hpp"

namespace graft::cpu {
class ThreadPool;
}

namespace graft::cpu {

/// Activations: the table and the reference kernel are graft_rt's (lib/rt/graft_rt/act.hpp).
using graft_rt::Act;
using graft_rt::ActParams;

/// y[i] = act(x[i]) for i < n. x and y may alias (in place). sigmoid and tanh vectorized, the
/// rest graft_rt::activation.
void activate(const float* x, float* y, std::int64_t n, const ActParams& a);

/// An activation kernels can apply in registers with comparisons only (exact): relu (max(x, 0),
/// NaN becomes 0), then a clamp min(hi, max(lo, x)) (NaN stays): relu, clip and a relu with a
/// max_value (ReLU6). `other` when it is neither: activate() then runs on the finished output.
struct ClampForm {
    bool relu = false, clamp = false, other = false;
    float lo = -__builtin_huge_valf(), hi = __builtin_huge_valf();
};
ClampForm clamp_form(const ActParams* a);

/// y[M,N] = act(x[M,K] . w[K,N] + bias[N]); w row-major (Keras Dense layout); bias may be null.
void dense(const float* x, const float* w, const float* bias, float* y,
           std::int64_t M, std::int64_t K, std::int64_t N, const ActParams& a);

/// The row epilogue of graft_rt's convolution loops with the fast activation (see
/// graft_rt::RowActivation): y[0, n) = act(y[0, n)).
struct ActivateRows {
    ActParams act;
    void operator()(float* y, std::int64_t n) const {
        if (act.kind != Act::linear) activate(y, y, n, act);
    }
};

/// Convolution geometries: graft_rt's (lib/rt/graft_rt/conv.hpp).
using graft_rt::Conv2DParams;
using graft_rt::Conv3DParams;

/// 2-D pooling over NHWC windows (p.d = p.kd = p.od = 1), vectorized; the same results as
/// graft_rt::pool_ndhwc (average pooling divides by the number of in-range taps, TF/Keras). A
/// pool splits the output rows.
using graft_rt::PoolParams;
void pool2d_nhwc(const float* x, float* y, const PoolParams& p, bool max, ThreadPool* pool = nullptr);

/// graft_rt::transpose and graft_rt::pad_nd (graft_rt/shape.hpp), the output split over a pool
/// in blocks of its outermost axis of size > 1 (shape.cpp).
void transpose(const float* x, float* y, const std::int64_t* in_shape, const int* perm, int rank, ThreadPool* pool);
void pad_nd(const float* x, float* y, const std::int64_t* in_shape, const std::int64_t* out_shape, const std::int64_t* begin,
            int rank, int mode, float value, ThreadPool* pool);


/// Recurrent layers over x [N,T,I] (batch-major, Keras layout), graft_rt::RnnParams (the
/// reference kernels: graft_rt/recurrent.hpp). Output y is [N,T,U] when return_sequences, else
/// [N,U] (the last step processed). h0/c0 ([N,U], initial states; trailing defaulted arguments)
/// may be null (zeros). h_last/c_last may be null (not wanted). A Keras mask [N,T] is the
/// trailing `mask` argument (p.masked sizes the workspace for it). Scratch: rnn_workspace floats.
using graft_rt::RnnParams;
using graft_rt::rnn_workspace;

/// Optional speed-ups a native generator sets up once (each may be absent).
struct RnnPrepared {
    const float* w_packed = nullptr;  ///< W packed for the GEMM: gemm::pack_b(W, G*U, I, G*U)
    const float* r_packed = nullptr;  ///< R packed by rnn_pack_recurrent(..., false): step products of several rows
    const float* r_gemv = nullptr;    ///< R packed by rnn_pack_recurrent(..., true): single-row step products
    ThreadPool* pool = nullptr;       ///< splits the batch rows over threads (each runs the whole sequence)
    /// LSTM at batch 1 only (tanh / sigmoid): when > 0, w_packed, r_gemv and b_parts hold W, R
    /// and b with their columns in part order (rnn_lstm_part_order) and each step runs as
    /// `parts` slices of the units, split evenly over the pool's threads (or one after the other).
    int parts = 0;
    const float* b_parts = nullptr;   ///< the bias in part order (null: no bias)
    /// int8 (LoadOptions::precision): W and R quantised by gemm::qpack (whole, [I, G*U] and
    /// [U, G*U]); the products then run gemm::qgemm with `qwork` as scratch, rnn_qwork() floats
    /// beyond the recurrent workspace. Not with parts; a GRU with R split in two keeps R in fp32.
    const float* w_q = nullptr;
    const float* r_q = nullptr;
    float* qwork = nullptr;
    /// SimpleRNN and LSTM of several rows: [W; R] stacked, [I + U, G*U], packed for the GEMM
    /// (gemm::pack_b). Each step then multiplies the rows' [x_t | h] by it in one product, with
    /// no input projection of every step beforehand; the workspace is rnn_work_floats'.
    const float* wr_packed = nullptr;
    /// R is constant and finite: with a zero initial state (no h0) the first step's h . R is
    /// exactly zero, and the stacked [W; R] steps and the batch-1 split steps skip it (0 . inf
    /// would be NaN, hence finite).
    bool r_finite = false;
};
/// Scratch floats a recurrent kernel with `gates` gates needs with these prepared weights:
/// rnn_workspace, or with wr_packed the stacked steps' (a step's worth, no projection of every step).
std::int64_t rnn_work_floats(const RnnParams& p, int gates, const RnnPrepared& prep);
/// Scratch floats the int8 products of a recurrent layer need (RnnPrepared::qwork).
std::int64_t rnn_qwork(const RnnParams& p);
/// Regroups the 4U gate columns of a [rows, 4U] matrix (Keras order i f c o, each U wide) so
/// that each of `parts` slices of the units has its four gates together:
/// dst[r, (t*4 + g)*U/parts + j] = src[r, g*U + t*U/parts + j]. u % parts == 0.
void rnn_lstm_part_order(const float* src, std::int64_t rows, std::int64_t u, int parts, float* dst);
/// R [U, G*U] packed for the step products: in GEMM panels (gemm::pack_b), or with gemv the
/// matrix-vector layout (gemm::gemv_pack). split_last (GRU without reset_after): R[:, :(G-1)U]
/// and R[:, (G-1)U:] packed one after the other.
std::vector<float> rnn_pack_recurrent(const float* R, std::int64_t u, int gates, bool split_last, bool gemv);
/// W [I, G*U] above R [U, G*U], packed for the GEMM (gemm::pack_b): RnnPrepared::wr_packed.
std::vector<float> rnn_pack_stacked(const float* W, const float* R, std::int64_t i, std::int64_t u, int gates);

/// SimpleRNN: h = act(x W + h R + b); W [I,U], R [U,U], b [U] or null.
void simple_rnn(const float* x, const float* W, const float* R, const float* b, float* y, float* h_last,
                const RnnParams& p, float* work, const float* h0 = nullptr, const float* mask = nullptr,
                const RnnPrepared& prep = {});
/// LSTM, Keras gate order i, f, c, o: W [I,4U], R [U,4U], b [4U] or null; peepholes pp [3U]
/// (i, f, o; graft_rt::rnn_lstm_cell) or null.
void lstm(const float* x, const float* W, const float* R, const float* b, const float* pp, float* y, float* h_last,
          float* c_last, const RnnParams& p, float* work, const float* h0 = nullptr, const float* c0 = nullptr,
          const float* mask = nullptr, const RnnPrepared& prep = {});
/// GRU, Keras gate order z, r, h: W [I,3U], R [U,3U].
/// reset_after = false: b [3U] or null;  h~ = act(x Wh + (r*h) Rh + bh).
/// reset_after = true:  b [2,3U] (input bias row, recurrent bias row) or null; h~ = act(x Wh + bih + r*(h Rh + bhh)).
void gru(const float* x, const float* W, const float* R, const float* b, bool reset_after, float* y, float* h_last,
         const RnnParams& p, float* work, const float* h0 = nullptr, const float* mask = nullptr,
         const RnnPrepared& prep = {});

// ---- convolutions (conv.cpp). All channels-last; padding explicit (leading pad; the rest follows
// from the output size); out-of-range taps read zero. Transposed convolutions run graft_rt's
// kernels; depthwise ones depthwise.cpp's.

/// Convolution over NDHWC with the Keras kernel w [KD,KH,KW,Cin,Cout] as it is (not packed): the
/// loop of graft_rt::conv_rows, every tap a product on the GEMM. 1-D and 2-D: graft_rt::as_3d.
void conv3d_ndhwc_unpacked(const float* x, const float* w, const float* bias, float* y,
                           const Conv3DParams& p, const ActParams& a);

/// Depthwise convolution over NHWC (graft_rt::depthwise2d_nhwc's contract: w [kh][kw][cin*mult],
/// bias or null), then the activation, the output rows split over `pool`; vectorized for
/// multiplier 1 (depthwise.cpp), graft_rt's reference kernel otherwise.
void depthwise2d_nhwc(const float* x, const float* w, const float* bias, float* y, const graft_rt::DepthwiseParams& p,
                      const ActParams& act, ThreadPool* pool = nullptr);


/// Batched matrix product: y[b] = x[b] . w[b], x [B,M,K], w [B,K,N], y [B,M,N], split over
/// `pool` when given.
void batch_matmul(const float* x, const float* w, float* y, std::int64_t B, std::int64_t M, std::int64_t K, std::int64_t N,
                  ThreadPool* pool = nullptr);

}  // namespace graft::cpu
