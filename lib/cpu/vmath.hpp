// Vectorized transcendental activations and recurrent cells (AVX-512 / AVX2+FMA / portable
// GCC vectors, chosen at run time with the GEMM's instruction set: gemm::active_isa()).
//
// tanh: Eigen's rational approximation on [-7.9053, 7.9053], clamped beyond (there tanh is 1
// to within 3e-7); error a few ulp (<= 5e-7 absolute and relative). sigmoid: from e = exp(-|x|)
// (Cephes-style: range reduction to [-ln2/2, ln2/2], degree-6 polynomial, 2^n scaling that is
// exact into the subnormals), 1 / (1 + e) for x >= 0 and e / (1 + e) below: relative error a
// few ulp wherever the result is a normal float, subnormal results down to x = -104, then 0.
// Both propagate NaN and never produce one from a non-NaN input (infinities included).
// x and y may alias. Error bounds are checked in tests/unit/test_vmath.cpp.
#pragma once

#include <cstdint>

namespace graft::cpu::vmath {

void tanh(const float* x, float* y, std::int64_t n);
void sigmoid(const float* x, float* y, std::int64_t n);
/// GELU (exact form, x erfc(-x / sqrt 2) / 2) with erfc from Abramowitz & Stegun 7.1.26 and
/// exp as sigmoid's: absolute error <= 7.5e-8 |x| + a few ulp (no relative accuracy in the
/// far negative tail, where GELU is below 1e-6 |x|). NaN propagates.
void gelu(const float* x, float* y, std::int64_t n);

/// One row of an LSTM step with the Keras default activations (recurrent sigmoid, tanh):
/// z = [i | f | g | o] pre-activations (4u floats, read only); c (u) is updated in place to
/// sigmoid(f) c + sigmoid(i) tanh(g), and h (u) = sigmoid(o) tanh(c). The gates' sigmoid is
/// (1 + tanh(x/2)) / 2 here (cheaper; absolute error a few 1e-8, all a gate needs).
void lstm_cell(const float* z, float* c, float* h, std::int64_t u);

/// Softmax of `scale` times each of `rows` contiguous rows of `len` (x and y may alias): exp as
/// sigmoid's, relative error a few ulp; NaN and infinities as graft_rt::softmax.
void softmax_rows(const float* x, float* y, std::int64_t rows, std::int64_t len, float scale = 1.f);

/// Layer normalization of `rows` rows of k: (x - mean) / sqrt(var + eps) * gamma + beta (gamma,
/// beta [k] or null; x and y may alias). Mean and variance in float, two passes over V::W partial
/// sums: relative error about 1e-7 sqrt(k) against double statistics.
void layer_norm_rows(const float* x, const float* gamma, const float* beta, float* y, std::int64_t rows, std::int64_t k,
                     float eps);

/// The end of a GRU step with tanh: h = zg h + (1 - zg) tanh(hh), zg already activated (u floats each).
void gru_blend(const float* zg, const float* hh, float* h, std::int64_t u);

}  // namespace graft::cpu::vmath
