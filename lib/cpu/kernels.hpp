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

/// 2-D pooling over NHWC. Average pooling divides by the number of in-range taps (TF/Keras).
enum class Pool : int { max, avg };
struct Pool2DParams {
    std::int64_t n, h, w, c;
    std::int64_t kh, kw;
    std::int64_t stride_h, stride_w;
    std::int64_t pad_top, pad_left;
    std::int64_t oh, ow;
};
void pool2d_nhwc(const float* x, float* y, const Pool2DParams& p, Pool kind);

/// Reduce the middle dimension: x [outer, mid, inner] -> y [outer, inner] (max or mean).
void reduce_mid(const float* x, float* y, std::int64_t outer, std::int64_t mid, std::int64_t inner, Pool kind);

/// y = x * scale[c] + shift[c] with x viewed as [outer, channels, inner]. x and y may alias.
void channel_affine(const float* x, const float* scale, const float* shift, float* y,
                    std::int64_t outer, std::int64_t channels, std::int64_t inner);

/// Elementwise merge of n >= 1 same-sized inputs.
enum class Merge : int { add, sub, mul, avg, max, min };
/// sub takes exactly two inputs. y may alias xs[0].
void merge(Merge kind, const float* const* xs, int n, float* y, std::int64_t size);

/// Softmax along the middle dimension of x viewed as [outer, len, inner]. x and y may alias.
void softmax(const float* x, float* y, std::int64_t outer, std::int64_t len, std::int64_t inner);

/// y = x transposed: y's axis i is x's axis perm[i]. rank <= 8.
void transpose(const float* x, float* y, const std::int64_t* in_shape, const int* perm, int rank);

/// Concatenate n inputs along the middle dimension: input i viewed as [outer, lens[i], inner].
void concat(const float* const* xs, const std::int64_t* lens, int n, float* y,
            std::int64_t outer, std::int64_t inner);

/// Recurrent layers over x [N,T,I] (batch-major, Keras layout).
/// Output y is [N,T,U] when return_sequences, else [N,U] (the last step processed).
/// h0/c0 ([N,U], initial states; trailing defaulted arguments) may be null (zeros). h_last/c_last may be null (not wanted).
struct RnnParams {
    std::int64_t n, t, i, u;
    bool return_sequences = false;
    bool go_backwards = false;   // process t = T-1 .. 0; sequences are emitted in processing order (Keras)
    ActParams act{Act::tanh};
    ActParams rec_act{Act::sigmoid};
    /// A Keras mask [N,T] (1 = use the step, 0 = skip it) is passed as the trailing `mask`
    /// argument: a skipped step keeps the states, and its output is the previous output (zeros
    /// before any step was used) or, with zero_output_for_mask, zeros (Keras backend.rnn).
    bool masked = false;              // sizes the workspace for a mask
    bool zero_output_for_mask = false;
};
/// Scratch floats each recurrent kernel needs (the caller provides them; no allocation inside).
std::int64_t rnn_workspace(const RnnParams& p, int gates);

/// Optional speed-ups a native generator sets up once (each may be absent).
struct RnnPrepared {
    const float* w_packed = nullptr;  ///< W packed for the GEMM: gemm::pack_b(W, G*U, I, G*U)
    const float* r_packed = nullptr;  ///< R packed by rnn_pack_recurrent(..., false): step products of several rows
    const float* r_gemv = nullptr;    ///< R packed by rnn_pack_recurrent(..., true): single-row step products
    ThreadPool* pool = nullptr;       ///< splits the batch rows over threads (each runs the whole sequence)
    /// LSTM at batch 1 only (tanh / sigmoid): when > 0, w_packed, r_gemv and b_parts hold W, R
    /// and b with their columns in part order (rnn_lstm_part_order) and each step runs as
    /// `parts` slices of the units, one per thread of the pool (or one after the other).
    int parts = 0;
    const float* b_parts = nullptr;   ///< the bias in part order (null: no bias)
};
/// Regroups the 4U gate columns of a [rows, 4U] matrix (Keras order i f c o, each U wide) so
/// that each of `parts` slices of the units has its four gates together:
/// dst[r, (t*4 + g)*U/parts + j] = src[r, g*U + t*U/parts + j]. u % parts == 0.
void rnn_lstm_part_order(const float* src, std::int64_t rows, std::int64_t u, int parts, float* dst);
/// R [U, G*U] packed for the step products: in GEMM panels (gemm::pack_b), or with gemv the
/// matrix-vector layout (gemm::gemv_pack). split_last (GRU without reset_after): R[:, :(G-1)U]
/// and R[:, (G-1)U:] packed one after the other.
std::vector<float> rnn_pack_recurrent(const float* R, std::int64_t u, int gates, bool split_last, bool gemv);

/// SimpleRNN: h = act(x W + h R + b); W [I,U], R [U,U], b [U] or null.
void simple_rnn(const float* x, const float* W, const float* R, const float* b, float* y, float* h_last,
                const RnnParams& p, float* work, const float* h0 = nullptr, const float* mask = nullptr,
                const RnnPrepared& prep = {});
/// LSTM, Keras gate order i, f, c, o: W [I,4U], R [U,4U], b [4U] or null.
void lstm(const float* x, const float* W, const float* R, const float* b, float* y, float* h_last, float* c_last,
          const RnnParams& p, float* work, const float* h0 = nullptr, const float* c0 = nullptr,
          const float* mask = nullptr, const RnnPrepared& prep = {});
/// GRU, Keras gate order z, r, h: W [I,3U], R [U,3U].
/// reset_after = false: b [3U] or null;  h~ = act(x Wh + (r*h) Rh + bh).
/// reset_after = true:  b [2,3U] (input bias row, recurrent bias row) or null; h~ = act(x Wh + bih + r*(h Rh + bhh)).
void gru(const float* x, const float* W, const float* R, const float* b, bool reset_after, float* y, float* h_last,
         const RnnParams& p, float* work, const float* h0 = nullptr, const float* mask = nullptr,
         const RnnPrepared& prep = {});

// ---- convolution / pooling / shape families (conv.cpp, conv3d.cpp, pad_crop_resize.cpp). All
// channels-last; padding explicit (leading pad; the rest follows from the output size);
// out-of-range taps read zero. Depthwise and transposed convolutions run graft_rt's kernels.

/// Convolution over NDHWC with the Keras kernel w [KD,KH,KW,Cin,Cout] as it is (not packed): the
/// loop of graft_rt::conv_rows, every tap a product on the GEMM. 1-D and 2-D: graft_rt::as_3d.
void conv3d_ndhwc_unpacked(const float* x, const float* w, const float* bias, float* y,
                           const Conv3DParams& p, const ActParams& a);

/// 3-D pooling over NDHWC (average over in-range taps only, as TF/Keras).
struct Pool3DParams {
    std::int64_t n, d, h, w, c;
    std::int64_t kd, kh, kw;
    std::int64_t stride_d, stride_h, stride_w;
    std::int64_t pad_front, pad_top, pad_left;
    std::int64_t od, oh, ow;
};
void pool3d_ndhwc(const float* x, float* y, const Pool3DParams& p, Pool kind);

/// y = x with axis i shifted by begin[i] (negative: cropped) into out_shape[i]; zeros where
/// nothing maps. Same rank for both, rank <= 8, any layout (plain row-major arrays).
void pad_nd(const float* x, float* y, const std::int64_t* in_shape, const std::int64_t* out_shape,
            const std::int64_t* begin, int rank);

/// Nearest-neighbour upsampling by integer factors: y[j] = x[j / factor] on every axis, y's
/// shape is in_shape * factors. rank <= 8, any layout.
void upsample_nearest(const float* x, float* y, const std::int64_t* in_shape, const std::int64_t* factors, int rank);

/// Bilinear resize of NHWC images [N,H,W,C] to [N,OH,OW,C] (TF rules, no corner alignment):
/// source coordinate = dst * in/out (legacy, TF 1 resize_bilinear) or (dst + 0.5) * in/out - 0.5
/// (half_pixel, TF 2 tf.image.resize), clamped to the image.
void resize_bilinear_nhwc(const float* x, float* y, std::int64_t n, std::int64_t h, std::int64_t w, std::int64_t c,
                          std::int64_t oh, std::int64_t ow, bool half_pixel);


// ---- normalization, activation-with-weights, embedding, masking, attention families
// (normalization.cpp, embedding.cpp, attention.cpp). Row-major; sizes checked when compiled.

/// Layer normalization of each row of x [M,K]: y = (x - mean) / sqrt(var + eps) * gamma + beta
/// (biased variance, Keras); gamma / beta [K] or null (1 / 0). x and y may alias.
void layer_norm(const float* x, const float* gamma, const float* beta, float* y, std::int64_t M, std::int64_t K, float eps);

/// Group normalization of x [N,S,C] (channels last; C split into `groups` contiguous groups):
/// statistics per (n, group) over S x C/groups; gamma / beta [C] or null. x and y may alias.
void group_norm(const float* x, const float* gamma, const float* beta, float* y, std::int64_t N, std::int64_t S,
                std::int64_t C, std::int64_t groups, float eps);

/// y = x / sqrt(max(sum x^2, eps)) over each row of x [M,K] (tf.math.l2_normalize). x and y may alias.
void l2_normalize(const float* x, float* y, std::int64_t M, std::int64_t K, float eps);

/// PReLU over x [N,K]: y = x < 0 ? alpha[k] * x : x (alpha [K]). x and y may alias.
void prelu(const float* x, const float* alpha, float* y, std::int64_t N, std::int64_t K);

/// Embedding lookup: y[m,:] = table[int(idx[m]),:] for idx [M] (float, truncated toward zero like
/// Keras' cast to int32), table [V,D]. An index that is NaN or outside [0, V) gives a row of zeros:
/// a kernel cannot raise, and the table is never read out of bounds.
void embedding(const float* idx, const float* table, float* y, std::int64_t M, std::int64_t V, std::int64_t D);

/// mask[i] = x[i] != 0 ? 1 : 0 (Keras Embedding mask_zero: the mask of the raw inputs).
void nonzero_mask(const float* x, float* mask, std::int64_t n);

/// Keras Masking over rows of x [M,K]: keep = any(x[m,:] != mask_value); y[m,:] = keep ? x : 0;
/// mask[m] = keep (mask may be null). x and y may alias.
void masking(const float* x, float* y, float* mask, std::int64_t M, std::int64_t K, float mask_value);

/// Batched matrix product: y[b] = x[b] . w[b], x [B,M,K], w [B,K,N], y [B,M,N].
void batch_matmul(const float* x, const float* w, float* y, std::int64_t B, std::int64_t M, std::int64_t K, std::int64_t N);

/// Attention over q [B,Tq,H*DK], k [B,Tv,H*DK], v [B,Tv,H*DV] -> y [B,Tq,H*DV] (head h uses
/// columns h*DK.. of q/k and h*DV.. of v and y). Scores per head:
///   dot:  s = scale * (q . k)
///   tanh: s = sum_d a[d] * tanh(scale * (q_d + k_d))   (a [DK] or null = 1; Keras concat / additive)
/// Positions j that are masked (causal: j > i; vmask [B,Tv] == 0) get s - 1e9 in float, as Keras
/// subtracts 1e9; then softmax over j, y = weights . v. work: Tv floats.
enum class Score : int { dot, tanh };
struct AttentionParams {
    std::int64_t b, tq, tv, heads, dk, dv;
    Score score = Score::dot;
    float scale = 1.f;
    bool causal = false;
};
void attention(const float* q, const float* k, const float* v, const float* a, const float* vmask, float* y,
               const AttentionParams& p, float* work);

}  // namespace graft::cpu
