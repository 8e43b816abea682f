// Reduced-precision matrix products: what LoadOptions::precision = int8 or bf16 runs for a Dense /
// MatMul, a recurrent layer and a Conv1D / Conv2D (qconv2d) with constant weights. A packed
// block starts with a header that says which (qview() reads it), so the callers pass the
// precision once, when they pack.
//
// bf16 (bkernel.hpp, bgemm.cpp): the weights are rounded to bf16 (to nearest even) once, the
// rows at every run, and the products of pairs summed in float by vdpbf16ps (AVX-512 BF16):
// 8 bits of mantissa per operand, so about 2^-8 of each product's size in error, for half the
// weights' bytes and twice the multiply-adds per instruction of fp32.
//
// Weights are quantised once, symmetrically per output column: w[k, n] ~ qw[k, n] * sw[n] with
// qw in [-127, 127] and sw[n] = max_k |w[k, n]| / 127. The input rows are quantised at run time,
// per row: a[m, k] ~ qa[m, k] * sa[m]. The product sums qa * qw exactly in int32 and scales
// once: c[m, n] = sa[m] * sw[n] * sum_k qa[m, k] qw[k, n] (+ bias, residual, activation as
// gemm.hpp's Epilogue).
//
// The AVX2 kernel (4 x 16 tiles) sign-extends the int8 weights to int16 and multiplies pairs of k with
// vpmaddwd into int32 (exact: no int16 saturation, unlike u8 x s8 vpmaddubsw). Its gain is the
// weights' bytes: a quarter of fp32's, which is what bounds batch-1 products. Weight layout:
// panels of 16 columns, [ceil(N/16)][ceil(K/2)][16 columns][2 k] int8, zero-padded, after the
// scales. Its rows are symmetric: qa in [-127, 127], sa[m] = max_k |a[m, k]| / 127.
//
// On AVX-512 VNNI (qgemm_avx512.cpp) qpack lays the weights out in quads of k instead,
// [ceil(N/16)][ceil(K/4)][16 columns][4 k], with each column's sum of qw, and the rows are
// quantised asymmetrically to u8: [min(a, 0), max(a, 0)] over 0..255, a ~ (u - z[m]) sa[m]
// with sa[m] = (max - min) / 255 and zero point z[m] (qa = u - z): a row of one sign, as after
// a ReLU, gets twice the symmetric levels (what ORT's u8 activations get). vpdpbusd sums four
// u8 x s8 products per int32 lane, exactly (K <= kQMaxKQuads), in tiles of 8 rows x 2 panels,
// and z[m] x the column sums come off before the scales. Portable kernels run either layout
// (the quads with symmetric rows, z = 128) where AVX2 or AVX-512 VNNI is not active.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cpu/gemm/gemm.hpp"
#include "graft/backend/native_kernel.hpp"
#include "graft/precision.hpp"

namespace graft::cpu::gemm {

/// Largest K the int32 sums are exact for (127 * 127 * K < 2^31).
constexpr std::int64_t kQMaxK = 133000;
/// Largest K of the u8 x s8 quads (255 * 127 * K < 2^31); above it the int16 pairs run.
constexpr std::int64_t kQMaxKQuads = 66000;

/// A packed int8 or bf16 matrix (a view into qpack()'s block).
struct QMatrix {
    Precision kind = Precision::int8;
    const float* scale = nullptr;          // int8: [N] per-column scales sw
    const std::int8_t* data = nullptr;     // int8: the panels
    const std::int32_t* csum = nullptr;    // int8 quads: the column sums of qw (null: pairs)
    const std::uint32_t* pairs = nullptr;  // bf16: the panels of pairs (bkernel.hpp)
    std::int64_t K = 0, N = 0;
};

/// Floats qpack()'s block of a K x N matrix takes (the header, then int8 scales and panels, or
/// bf16 panels).
std::size_t qpacked_floats(std::int64_t K, std::int64_t N, Precision kind = Precision::int8);
/// Quantises (int8, 1 <= K <= kQMaxK) or rounds (bf16) and packs row-major w [K, N] (row
/// stride ldw). `kind` is int8 or bf16.
std::vector<float> qpack(const float* w, std::int64_t ldw, std::int64_t K, std::int64_t N,
                         Precision kind = Precision::int8);
/// qpack() of the constant w [K, N] (row stride N), made once per model: the programs of other
/// batch sizes, and every op reading w, share the block (BuildContext::keep_shared, tagged by
/// precision and sizes).
const float* qpack_shared(native::BuildContext& b, const ConstantVariable& w, std::int64_t K, std::int64_t N,
                          Precision kind);
/// The view of a block qpack() made for these sizes (std::logic_error if it was not).
QMatrix qview(const float* block, std::int64_t K, std::int64_t N);

/// Floats of scratch qgemm() needs for M rows of K (the quantised rows and their scales).
std::size_t qgemm_work_floats(std::int64_t M, std::int64_t K);

/// C [M, N] (row stride ldc) = A [M, K] (row stride lda) . B, with the epilogue (bias or
/// accumulate, residual, activation). `work` holds qgemm_work_floats(M, K) floats.
void qgemm(std::int64_t M, std::int64_t N, std::int64_t K, const float* A, std::int64_t lda, const QMatrix& B,
           float* C, std::int64_t ldc, const Epilogue& e, float* work, ThreadPool* pool = nullptr);

/// Floats of scratch qconv2d() needs with up to `threads` threads.
std::size_t qconv2d_work_floats(const Conv2DParams& p, int threads);

/// y = conv2d(x, w) over NHWC with the epilogue (bias, residual, activation), B the kernel
/// [kh*kw*cin, cout] as qpack() packs it. Output pixels go in blocks: their patches copied into
/// rows (none for a pointwise convolution), then qgemm on them, each row quantised (int8) or
/// rounded (bf16) on its own. `work` holds qconv2d_work_floats(p, threads) floats; at most
/// `threads` of the pool's threads take part.
void qconv2d(const Conv2DParams& p, const float* x, const QMatrix& B, float* y, const Epilogue& e, float* work,
             ThreadPool* pool, int threads);

/// Whether this CPU runs qgemm() faster than gemm(): for int8 it has AVX2, for bf16 AVX-512
/// BF16 (the portable kernels are for correctness, not speed). LoadOptions::precision falls
/// back to fp32 where it has not.
bool qgemm_fast(Precision kind = Precision::int8);

}  // namespace graft::cpu::gemm
