// Native CPU kernels: plain functions over float buffers, free of the IR.
//
// The native backend binds IR operators to these at compile time. Every kernel takes raw
// pointers and sizes that were checked when the graph was compiled, allocates nothing and
// does no virtual call per element. Layouts are stated per kernel; the optimizer's layout
// pass guarantees them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace graft::native::kern {

/// An activation applied elementwise, also used as a fused epilogue.
enum class Act : int {
    linear, relu, sigmoid, tanh, softplus, softsign, elu, selu,
    hard_sigmoid,        // Keras 2: clip(0.2x + 0.5, 0, 1)
    hard_sigmoid_k3,     // Keras 3: clip(x/6 + 0.5, 0, 1)
    swish,               // x * sigmoid(x)
    gelu,                // exact: 0.5x(1 + erf(x/sqrt 2))
    gelu_tanh,           // tanh approximation
    exponential,
    leaky_relu,          // x < 0 ? alpha*x : x
    thresholded_relu,    // x > alpha ? x : 0
    relu_general,        // Keras ReLU layer: max_value, negative_slope (alpha), threshold
};

struct ActParams {
    Act kind = Act::linear;
    float alpha = 0.f;       // elu alpha, leaky slope, thresholded_relu theta, relu_general negative_slope
    float max_value = -1.f;  // relu_general: < 0 means none
    float threshold = 0.f;   // relu_general threshold
};

/// y[i] = act(x[i]) for i < n. x and y may alias (in place).
void activation(const float* x, float* y, std::int64_t n, const ActParams& a);

/// y[M,N] = act(x[M,K] . w[K,N] + bias[N]); w row-major (Keras Dense layout); bias may be null.
void dense(const float* x, const float* w, const float* bias, float* y,
           std::int64_t M, std::int64_t K, std::int64_t N, const ActParams& a);

/// 2-D convolution, x NHWC, w [KH,KW,Cin,Cout] (Keras layout), y NHWC [N,OH,OW,Cout].
/// Padding is explicit (top/left; the rest follows from OH/OW); out-of-range taps read zero.
struct Conv2DParams {
    std::int64_t n, h, w, cin;
    std::int64_t kh, kw, cout;
    std::int64_t stride_h, stride_w, dil_h, dil_w;
    std::int64_t pad_top, pad_left;
    std::int64_t oh, ow;
};
void conv2d_nhwc(const float* x, const float* w, const float* bias, float* y,
                 const Conv2DParams& p, const ActParams& a);

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
};
/// Scratch floats each recurrent kernel needs (the caller provides them; no allocation inside).
std::int64_t rnn_workspace(const RnnParams& p, int gates);

/// SimpleRNN: h = act(x W + h R + b); W [I,U], R [U,U], b [U] or null.
void simple_rnn(const float* x, const float* W, const float* R, const float* b, float* y, float* h_last,
                const RnnParams& p, float* work, const float* h0 = nullptr);
/// LSTM, Keras gate order i, f, c, o: W [I,4U], R [U,4U], b [4U] or null.
void lstm(const float* x, const float* W, const float* R, const float* b, float* y, float* h_last, float* c_last,
          const RnnParams& p, float* work, const float* h0 = nullptr, const float* c0 = nullptr);
/// GRU, Keras gate order z, r, h: W [I,3U], R [U,3U].
/// reset_after = false: b [3U] or null;  h~ = act(x Wh + (r*h) Rh + bh).
/// reset_after = true:  b [2,3U] (input bias row, recurrent bias row) or null; h~ = act(x Wh + bih + r*(h Rh + bhh)).
void gru(const float* x, const float* W, const float* R, const float* b, bool reset_after, float* y, float* h_last,
         const RnnParams& p, float* work, const float* h0 = nullptr);

}  // namespace graft::native::kern
