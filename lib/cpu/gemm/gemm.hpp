// Matrix products for the native kernels: C[M,N] = A[M,K] . B[K,N] (+ bias, residual, activation).
//
// B is either a plain row-major matrix (any row stride) or prepacked once into panels of 16
// columns ([ceil(N/16)][K][16], zero-padded), the layout the micro-kernels stream. A is a
// row-major matrix with a row stride, or the implicit im2col matrix of an NHWC convolution
// (never materialized: the micro-kernels read the input pixels through row pointers).
// The micro-kernels are chosen at run time from the CPU (AVX-512, AVX2+FMA, or portable).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cpu/kernels.hpp"

namespace graft::cpu {
class ThreadPool;
}

namespace graft::cpu::gemm {

enum class Isa : int { generic = 0, avx2 = 1, avx512 = 2 };

/// The best instruction set this CPU (and build) supports.
Isa detected_isa();
/// The instruction set in use: detected_isa(), or GRAFT_ISA=generic|avx2|avx512 from the
/// environment (clamped to what the CPU supports), or what set_isa() chose.
Isa active_isa();
/// Chooses the micro-kernels (tests and benchmarks). Returns false, changing nothing, when the
/// CPU does not support `isa`. Not thread-safe with respect to running kernels.
bool set_isa(Isa isa);
const char* isa_name(Isa isa);

/// Floats a packed copy of a K x N matrix takes.
std::size_t packed_size(std::int64_t K, std::int64_t N);
/// Packs row-major w [K, N] (row stride ldw) into panels; out holds packed_size(K, N) floats.
void pack_b(const float* w, std::int64_t ldw, std::int64_t K, std::int64_t N, float* out);
/// The same into a new vector.
std::vector<float> pack_b(const float* w, std::int64_t ldw, std::int64_t K, std::int64_t N);

/// The B operand.
struct BMatrix {
    const float* data = nullptr;
    std::int64_t ld = 0;  // row stride when not packed
    bool packed = false;
    /// Packed: the k rows of each panel (0: the product's K). A product may use the first K of
    /// them (the panel stride stays panel_k * 16).
    std::int64_t panel_k = 0;
};

/// What happens to C after the product.
struct Epilogue {
    const float* bias = nullptr;          // [N], added unless accumulating
    bool accumulate = false;              // C += A.B (bias ignored)
    const float* residual = nullptr;      // [M, N] rows with stride ldr, added after the product
    std::int64_t ldr = 0;
    const ActParams* act = nullptr; // applied last (null or linear: none)
};

/// Copies row-major w [K, N] (row stride ldw) in groups of `group` columns (a multiple of 16):
/// group g is [K][width] at out + g * group * K, width its columns rounded up to 16, zero-padded.
/// pack_b's panels are groups of 16, gemv_pack's blocks (gemv.hpp) groups of 128.
void pack_column_groups(const float* w, std::int64_t ldw, std::int64_t K, std::int64_t N, std::int64_t group,
                        float* out);

/// Columns [n0, n1) of C [M, N] for K = 0, the epilogue alone: bias (unless accumulating), residual,
/// activation.
void epilogue_only(std::int64_t M, std::int64_t n0, std::int64_t n1, float* C, std::int64_t ldc, const Epilogue& e);

/// C = A . B with A row-major [M, K] (row stride lda).
void gemm(std::int64_t M, std::int64_t N, std::int64_t K, const float* A, std::int64_t lda, const BMatrix& B,
          float* C, std::int64_t ldc, const Epilogue& e, ThreadPool* pool = nullptr);

/// An A whose rows are read in two parts, in place: row m is [a1 row m (k1 floats, row stride
/// lda1) | a2 row m (the other K - k1, row stride lda2)], as a recurrent step's [x_t | h].
struct SplitA {
    const float* a1 = nullptr;
    std::int64_t lda1 = 0, k1 = 0;
    const float* a2 = nullptr;
    std::int64_t lda2 = 0;
};

/// C = A . B with A in two parts (SplitA), never gathered: as the plain gemm, but a single row
/// runs the tile kernels rather than the matrix-vector kernel.
void gemm(std::int64_t M, std::int64_t N, std::int64_t K, const SplitA& A, const BMatrix& B, float* C,
          std::int64_t ldc, const Epilogue& e, ThreadPool* pool = nullptr);

/// NHWC convolution as an implicit GEMM: y[N*OH*OW, Cout] = im2col(x) . w, w [KH*KW*Cin, Cout]
/// (the Keras HWCN kernel viewed as a matrix). y rows are contiguous (ldc = Cout).
void conv2d(const Conv2DParams& p, const float* x, const BMatrix& w, float* y, const Epilogue& e,
            ThreadPool* pool = nullptr);

}  // namespace graft::cpu::gemm
