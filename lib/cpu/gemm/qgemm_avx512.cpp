// The int8 kernels for AVX-512 VNNI (qgemm.hpp): the same packed weights and quantised rows as
// the AVX2 kernels, but a panel's 16 columns x 2 k widen to one register and vpdpwssd multiplies
// the int16 pairs and adds both products to 16 int32 sums in one instruction (AVX2 takes
// vpmaddwd and vpaddd for 8). Tiles of 2 panels keep 8 sums in flight, enough to hide its
// latency. The rows are quantised by the AVX2 code.
#include "cpu/gemm/qkernel.hpp"
#include "cpu/simd.hpp"

#ifdef GRAFT_SIMD_X86
#include <cstring>
#include <utility>

GRAFT_SIMD_AVX512VNNI_BEGIN

namespace graft::cpu::gemm {
namespace {

inline __mmask16 col_mask(int cols) {
    return cols >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (cols < 0 ? 0 : cols)) - 1);
}

/// c = sum * sa * sw + (the bias, the old c when accumulating, or nothing), then the tile's relu
/// and clamp; sw is padded to whole panels.
template <int R, int P>
inline void store(const QTile& t, const __m512i (&acc)[R][P]) {
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
        float* c = t.c + r * t.ldc;
        const float* add = t.accumulate ? c : t.init;
        const __m512 sa = _mm512_set1_ps(t.sa[r]);
#pragma GCC unroll 8
        for (int p = 0; p < P; ++p) {
            const __mmask16 m = col_mask(t.cols - 16 * p);
            __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(acc[r][p]), _mm512_mul_ps(sa, _mm512_loadu_ps(t.sw + 16 * p)));
            if (add) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, add + 16 * p));
            if (t.relu) v = _mm512_max_ps(v, _mm512_setzero_ps());  // NaN: the second operand, 0
            if (t.clamp) v = _mm512_min_ps(_mm512_set1_ps(t.hi), _mm512_max_ps(_mm512_set1_ps(t.lo), v));  // NaN stays
            _mm512_mask_storeu_ps(c + 16 * p, m, v);
        }
    }
}

/// R rows x P panels: acc[r][p] sums the 16 columns of panel p for row r, exactly in int32.
/// Pairs: a panel's 16 columns x 2 k of int8 widen to int16 and vpdpwssd multiplies them by the
/// row's int16 pair. Quads: vpdpbusd multiplies the rows' u8 (q + 128) by the s8 weights as
/// they are, four products per int32 sum (twice vpdpwssd's); the 128 x column sums the +128
/// added come off before the scales.
template <int R, int P, bool Quads>
void vtile(const QTile& t) {
    constexpr int step = Quads ? 64 : 32;  // bytes of a panel per step of k
    __m512i acc[R][P];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
        for (int p = 0; p < P; ++p) acc[r][p] = _mm512_setzero_si512();
    for (std::int64_t k = 0; k < t.K2; ++k) {
        __m512i w[P];
#pragma GCC unroll 8
        for (int p = 0; p < P; ++p) {
            const std::int8_t* src = t.b + p * t.bps + k * step;
            if (t.prefetch && (Quads || p % 2 == 0))
                _mm_prefetch(reinterpret_cast<const char*>(src + 8 * step), _MM_HINT_T0);
            if constexpr (Quads)
                w[p] = _mm512_loadu_si512(src);
            else
                w[p] = _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src)));
        }
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
            const __m512i a = _mm512_set1_epi32(t.a[r * t.lda + k]);
#pragma GCC unroll 8
            for (int p = 0; p < P; ++p)
                acc[r][p] = Quads ? _mm512_dpbusd_epi32(acc[r][p], a, w[p]) : _mm512_dpwssd_epi32(acc[r][p], a, w[p]);
        }
    }
    if constexpr (Quads) {
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
            for (int p = 0; p < P; ++p)
                acc[r][p] = _mm512_sub_epi32(
                    acc[r][p], _mm512_mullo_epi32(_mm512_set1_epi32(t.za[r]), _mm512_loadu_si512(t.csum + 16 * p)));
    }
    store<R, P>(t, acc);
}

/// The row's asymmetric quantisation (QKernels::quantise_u8): [lo, hi] = [min(x, 0), max(x, 0)]
/// over 0..255, scale (hi - lo) / 255, zero point round(-lo x 255 / (hi - lo)), u = round(x x
/// 255 / (hi - lo)) + zero saturated to 0..255 (round to nearest even). A row of zeros, or one
/// with a NaN or an infinity (the sum of x x 0 is NaN then), gets every u and the zero point 0:
/// its products are the bias, or NaN through the scale. 64 floats at a time are converted,
/// packed to bytes with unsigned saturation and stored at once (a masked vpmovdb to memory is
/// slow on Zen 4).
float quantise_u8(const float* x, std::int64_t K, std::uint8_t* u, std::int32_t* zero) {
    const __m512 z0 = _mm512_setzero_ps();
    __m512 hi0 = z0, hi1 = z0, lo0 = z0, lo1 = z0, bad0 = z0, bad1 = z0;
    std::int64_t k = 0;
    for (; k + 32 <= K; k += 32) {
        const __m512 a = _mm512_loadu_ps(x + k), b = _mm512_loadu_ps(x + k + 16);
        hi0 = _mm512_max_ps(hi0, a), lo0 = _mm512_min_ps(lo0, a), bad0 = _mm512_fmadd_ps(a, z0, bad0);
        hi1 = _mm512_max_ps(hi1, b), lo1 = _mm512_min_ps(lo1, b), bad1 = _mm512_fmadd_ps(b, z0, bad1);
    }
    for (; k < K; k += 16) {
        const __m512 a = _mm512_maskz_loadu_ps(col_mask(static_cast<int>(K - k)), x + k);
        hi0 = _mm512_max_ps(hi0, a), lo0 = _mm512_min_ps(lo0, a), bad0 = _mm512_fmadd_ps(a, z0, bad0);
    }
    const float hi = _mm512_reduce_max_ps(_mm512_max_ps(hi0, hi1)), lo = _mm512_reduce_min_ps(_mm512_min_ps(lo0, lo1));
    const float bad = _mm512_reduce_add_ps(_mm512_add_ps(bad0, bad1));
    const float range = bad == 0.f ? hi - lo : __builtin_nanf("");
    const std::int64_t padded = (K + 3) / 4 * 4;
    if (!(range >= 1e-30f && range <= 3.4e38f)) {  // NaN compares false
        std::memset(u, 0, static_cast<std::size_t>(padded));
        *zero = 0;
        return range / 255.f;
    }
    const float inv = 255.f / range;
    *zero = static_cast<std::int32_t>(__builtin_nearbyintf(-lo * inv));
    const __m512i zp = _mm512_set1_epi32(*zero);
    const __m512 vinv = _mm512_set1_ps(inv);
    // After packing, dword 4 i + s holds source s's elements 4 i .. 4 i + 3: put them back in order.
    const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    auto q = [&](const float* p) {
        return _mm512_add_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(p), vinv)), zp);
    };
    k = 0;
    for (; k + 64 <= K; k += 64) {
        const __m512i b = _mm512_packus_epi16(_mm512_packus_epi32(q(x + k), q(x + k + 16)),
                                              _mm512_packus_epi32(q(x + k + 32), q(x + k + 48)));
        _mm512_storeu_si512(u + k, _mm512_permutexvar_epi32(order, b));
    }
    for (; k < padded; k += 16) {
        const __mmask16 in = col_mask(static_cast<int>(K - k)), out = col_mask(static_cast<int>(padded - k));
        const __m512i v =
            _mm512_add_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(_mm512_maskz_loadu_ps(in, x + k), vinv)), zp);
        _mm_mask_storeu_epi8(u + k, out, _mm512_cvtusepi32_epi8(_mm512_max_epi32(v, _mm512_setzero_si512())));
    }
    return range / 255.f;
}

template <int... R>
QKernels make(std::integer_sequence<int, 0, R...>, float (*quantise)(const float*, std::int64_t, std::int16_t*)) {
    return QKernels{{nullptr, &vtile<R, 2, false>...},
                    {nullptr, &vtile<R, 1, false>...},
                    2,
                    2,
                    &vtile<1, 4, false>,
                    quantise,
                    kQRows,
                    nullptr,
                    true};
}

template <int... R>
QKernels make_quads(std::integer_sequence<int, 0, R...>, float (*quantise)(const float*, std::int64_t, std::int16_t*)) {
    return QKernels{{nullptr, &vtile<R, 2, true>...},
                    {nullptr, &vtile<R, 1, true>...},
                    2,
                    4,
                    &vtile<1, 4, true>,
                    quantise,
                    kQMaxRows,
                    &quantise_u8,
                    true};
}

bool has_vnni() {
    static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                            __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
    return has && qkernels_avx2();
}

}  // namespace

const QKernels* qkernels_avx512_vnni() {
    if (!has_vnni()) return nullptr;
    static const QKernels k = make(std::make_integer_sequence<int, kQRows + 1>{}, qkernels_avx2()->quantise);
    return &k;
}

const QKernels* qkernels_avx512_vnni_quads() {
    if (!has_vnni()) return nullptr;
    static const QKernels k = make_quads(std::make_integer_sequence<int, kQMaxRows + 1>{}, qkernels_avx2()->quantise);
    return &k;
}

}  // namespace graft::cpu::gemm

GRAFT_SIMD_AVX512VNNI_END

#else
namespace graft::cpu::gemm {
const QKernels* qkernels_avx512_vnni() { return nullptr; }
const QKernels* qkernels_avx512_vnni_quads() { return nullptr; }
}  // namespace graft::cpu::gemm
#endif
