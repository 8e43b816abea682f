// Matrix product core (register-blocked, cache-blocked over K) and the dense kernel.
//
// The micro-kernels keep an R x (CV * VW) tile of y in vector registers and stream one row of
// w per k step, broadcasting x. VW follows the instruction set the file is compiled for
// (SSE/NEON 4, AVX 8, AVX-512 16), so no ABI-changing vector type is ever used.
#include <cstring>

#include "internal.hpp"

namespace graft::native::kern {
namespace {

using i64 = std::int64_t;

#if defined(__GNUC__)
#  if defined(__AVX512F__)
constexpr int VW = 16;
#  elif defined(__AVX__)
constexpr int VW = 8;
#  else
constexpr int VW = 4;
#  endif
typedef float vf __attribute__((vector_size(VW * sizeof(float))));
inline vf vload(const float* p) { vf v; __builtin_memcpy(&v, p, sizeof v); return v; }
inline void vstore(float* p, vf v) { __builtin_memcpy(p, &v, sizeof v); }
inline vf vsplat(float s) { return vf{} + s; }
inline void vmadd(vf& acc, vf w, float s) { acc += w * s; }
#else
constexpr int VW = 4;
struct vf { float e[VW]; };
inline vf vload(const float* p) { vf v; std::memcpy(v.e, p, sizeof v.e); return v; }
inline void vstore(float* p, vf v) { std::memcpy(p, v.e, sizeof v.e); }
inline vf vsplat(float s) { vf v; for (int j = 0; j < VW; ++j) v.e[j] = s; return v; }
inline void vmadd(vf& acc, vf w, float s) { for (int j = 0; j < VW; ++j) acc.e[j] += w.e[j] * s; }
#endif

constexpr i64 KB = 256;  // K block: keeps a KB x N slab of w hot in L2 across row blocks

/// y[R, CV*VW] (+)= x[R, K] . w[K, CV*VW]
template <int R, int CV>
inline void micro(const float* x, i64 ldx, const float* w, i64 ldw, float* y, i64 ldy, i64 K,
                  const float* bias, bool accumulate) {
    vf acc[R][CV];
    if (accumulate) {
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
            for (int c = 0; c < CV; ++c) acc[r][c] = vload(y + r * ldy + c * VW);
    } else {
#pragma GCC unroll 8
        for (int c = 0; c < CV; ++c) {
            const vf b = bias ? vload(bias + c * VW) : vsplat(0.f);
#pragma GCC unroll 8
            for (int r = 0; r < R; ++r) acc[r][c] = b;
        }
    }
    for (i64 k = 0; k < K; ++k) {
        vf wv[CV];
#pragma GCC unroll 8
        for (int c = 0; c < CV; ++c) wv[c] = vload(w + k * ldw + c * VW);
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
            const float s = x[r * ldx + k];
#pragma GCC unroll 8
            for (int c = 0; c < CV; ++c) vmadd(acc[r][c], wv[c], s);
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
        for (int c = 0; c < CV; ++c) vstore(y + r * ldy + c * VW, acc[r][c]);
}

/// Column tail narrower than one vector: y[R, width] (+)= x[R, K] . w[K, width], width < VW.
template <int R>
inline void micro_tail(const float* x, i64 ldx, const float* w, i64 ldw, float* y, i64 ldy, i64 K,
                       const float* bias, bool accumulate, int width) {
    float acc[R][VW];
    for (int r = 0; r < R; ++r)
        for (int j = 0; j < width; ++j)
            acc[r][j] = accumulate ? y[r * ldy + j] : (bias ? bias[j] : 0.f);
    for (i64 k = 0; k < K; ++k) {
        const float* wr = w + k * ldw;
        for (int r = 0; r < R; ++r) {
            const float s = x[r * ldx + k];
            for (int j = 0; j < width; ++j) acc[r][j] += wr[j] * s;
        }
    }
    for (int r = 0; r < R; ++r)
        for (int j = 0; j < width; ++j) y[r * ldy + j] = acc[r][j];
}

/// R rows of y over all N columns.
template <int R, int CV>
void row_block(const float* x, i64 ldx, const float* w, i64 ldw, float* y, i64 ldy, i64 K, i64 N,
               const float* bias, bool accumulate) {
    i64 n = 0;
    for (; n + CV * VW <= N; n += CV * VW)
        micro<R, CV>(x, ldx, w + n, ldw, y + n, ldy, K, bias ? bias + n : nullptr, accumulate);
    for (; n + VW <= N; n += VW)
        micro<R, 1>(x, ldx, w + n, ldw, y + n, ldy, K, bias ? bias + n : nullptr, accumulate);
    if (n < N)
        micro_tail<R>(x, ldx, w + n, ldw, y + n, ldy, K, bias ? bias + n : nullptr, accumulate,
                      static_cast<int>(N - n));
}

void epilogue(float* y, i64 ldy, i64 rows, i64 N, const ActParams* act) {
    if (!act || act->kind == Act::linear) return;
    for (i64 r = 0; r < rows; ++r) activation(y + r * ldy, y + r * ldy, N, *act);
}

}  // namespace

namespace detail {

void gemm(const float* x, i64 ldx, const float* w, i64 ldw, float* y, i64 ldy, i64 M, i64 K, i64 N,
          const float* bias, bool accumulate, const ActParams* act) {
    if (M <= 0 || N <= 0) return;
    if (K <= 0) {
        if (!accumulate)
            for (i64 m = 0; m < M; ++m)
                for (i64 n = 0; n < N; ++n) y[m * ldy + n] = bias ? bias[n] : 0.f;
        epilogue(y, ldy, M, N, act);
        return;
    }
    for (i64 k0 = 0; k0 < K; k0 += KB) {
        const i64 kc = K - k0 < KB ? K - k0 : KB;
        const bool acc = accumulate || k0 > 0;
        const bool last = k0 + kc >= K;
        const float* xk = x + k0;
        const float* wk = w + k0 * ldw;
        i64 m = 0;
        for (; m + 4 <= M; m += 4) {
            row_block<4, 2>(xk + m * ldx, ldx, wk, ldw, y + m * ldy, ldy, kc, N, bias, acc);
            if (last) epilogue(y + m * ldy, ldy, 4, N, act);
        }
        switch (M - m) {
            case 3: row_block<3, 2>(xk + m * ldx, ldx, wk, ldw, y + m * ldy, ldy, kc, N, bias, acc); break;
            case 2: row_block<2, 4>(xk + m * ldx, ldx, wk, ldw, y + m * ldy, ldy, kc, N, bias, acc); break;
            case 1: row_block<1, 4>(xk + m * ldx, ldx, wk, ldw, y + m * ldy, ldy, kc, N, bias, acc); break;
            default: break;
        }
        if (last && m < M) epilogue(y + m * ldy, ldy, M - m, N, act);
    }
}

}  // namespace detail

void dense(const float* x, const float* w, const float* bias, float* y, std::int64_t M, std::int64_t K,
           std::int64_t N, const ActParams& a) {
    detail::gemm(x, K, w, N, y, N, M, K, N, bias, false, &a);
}

}  // namespace graft::native::kern
