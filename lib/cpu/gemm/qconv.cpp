// Reduced-precision 2-D convolutions (qgemm.hpp, qconv2d): the patches of a block of output
// pixels copied into rows (im2col), then qgemm on that block.
#include <algorithm>

#include "cpu/gemm/qgemm.hpp"
#include "cpu/threadpool.hpp"

namespace graft::cpu::gemm {
namespace {

using i64 = std::int64_t;

i64 ceil_div(i64 a, i64 b) { return (a + b - 1) / b; }

// The patch rows of a block take at most this many floats (256 KB): with the block's quantised
// rows and a pair of weight panels they stay in a 1 MB L2.
constexpr i64 kBlockFloats = 1 << 16;
// Rows of a block: a multiple of every kernel set's tile height, at most kMaxBlockRows.
constexpr i64 kRowUnit = 8, kMaxBlockRows = 512;
// Products smaller than this many multiply-adds stay on the calling thread.
constexpr i64 kParallelMin = 1 << 16;

/// Output pixels per block of the convolution: as many as fit kBlockFloats of patches.
i64 block_rows(const Conv2DParams& p) {
    const i64 K = std::max<i64>(1, p.kh * p.kw * p.cin);
    return std::clamp<i64>(kBlockFloats / K / kRowUnit * kRowUnit, kRowUnit, kMaxBlockRows);
}

/// The patches of output pixels [m0, m0 + rows) (pixel m = (n * oh + oy) * ow + ox) as rows of
/// K = kh * kw * cin floats in (ky, kx, c) order, the kernel's; taps outside the input read zero.
/// Without dilation along w a kernel row's taps are one run of the input: one copy each.
void gather(const Conv2DParams& p, const float* x, i64 m0, i64 rows, float* out) {
    const i64 K = p.kh * p.kw * p.cin, pixels = p.oh * p.ow;
    const bool runs = p.dil_w == 1;
    i64 n = m0 / pixels, oy = m0 % pixels / p.ow, ox = m0 % p.ow;
    for (i64 r = 0; r < rows; ++r, ++ox) {
        if (ox == p.ow) ox = 0, ++oy;
        if (oy == p.oh) oy = 0, ++n;
        const float* xn = x + n * p.h * p.w * p.cin;
        float* dst = out + r * K;
        const i64 ix0 = ox * p.stride_w - p.pad_left;
        // Taps [lo, hi) of a kernel row read inside the input (all of them along w when dilated: checked per tap).
        const i64 lo = runs ? std::clamp<i64>(-ix0, 0, p.kw) : 0,
                  hi = runs ? std::clamp<i64>(p.w - ix0, lo, p.kw) : p.kw;
        for (i64 ky = 0; ky < p.kh; ++ky, dst += p.kw * p.cin) {
            const i64 iy = oy * p.stride_h - p.pad_top + ky * p.dil_h;
            if (iy < 0 || iy >= p.h) {
                std::fill(dst, dst + p.kw * p.cin, 0.f);
                continue;
            }
            const float* src = xn + iy * p.w * p.cin;
            if (runs) {
                std::fill(dst, dst + lo * p.cin, 0.f);
                std::copy(src + (ix0 + lo) * p.cin, src + (ix0 + hi) * p.cin, dst + lo * p.cin);
                std::fill(dst + hi * p.cin, dst + p.kw * p.cin, 0.f);
                continue;
            }
            for (i64 kx = 0; kx < p.kw; ++kx) {
                const i64 ix = ix0 + kx * p.dil_w;
                float* d = dst + kx * p.cin;
                if (ix < 0 || ix >= p.w)
                    std::fill(d, d + p.cin, 0.f);
                else
                    std::copy(src + ix * p.cin, src + (ix + 1) * p.cin, d);
            }
        }
    }
}

/// What the scratch of one worker holds: the block's patches (none for a pointwise
/// convolution, whose rows are x's) and qgemm's work for them.
struct Scratch {
    i64 patches, qwork;
    i64 floats() const { return patches + qwork; }
};

Scratch scratch(const Conv2DParams& p, i64 rows) {
    const i64 K = p.kh * p.kw * p.cin;
    return {is_pointwise(p) ? 0 : rows * K, static_cast<i64>(qgemm_work_floats(rows, K))};
}

/// The most rows qconv2d multiplies at once: fewer blocks than two per thread.
i64 small_rows(const Conv2DParams& p, int threads) { return 2 * threads * block_rows(p); }

}  // namespace

std::size_t qconv2d_work_floats(const Conv2DParams& p, int threads) {
    const i64 M = p.n * p.oh * p.ow, T = std::max(1, threads);
    const i64 blocked = T * scratch(p, std::min(M, block_rows(p))).floats();
    const i64 whole = scratch(p, std::min(M, small_rows(p, threads))).floats();
    return static_cast<std::size_t>(std::max(blocked, whole));
}

void qconv2d(const Conv2DParams& p, const float* x, const QMatrix& B, float* y, const Epilogue& e, float* work,
             ThreadPool* pool, int threads) {
    const i64 M = p.n * p.oh * p.ow, N = p.cout, K = p.kh * p.kw * p.cin;
    if (M <= 0 || N <= 0) return;
    const bool pointwise = is_pointwise(p);
    // Rows [m0, m0 + rows) with the scratch at s: their patches, then qgemm (on `on`'s threads).
    auto product = [&](i64 m0, i64 rows, float* s, ThreadPool* on) {
        const Scratch sc = scratch(p, rows);
        const float* a = x + m0 * K;  // pointwise: K == cin, the rows of x
        if (!pointwise) {
            gather(p, x, m0, rows, s);
            a = s;
        }
        Epilogue eb = e;
        if (eb.residual) eb.residual += m0 * eb.ldr;
        qgemm(rows, N, K, a, K, B, y + m0 * N, N, eb, s + sc.patches, on);
    };
    const int T = std::min(pool_size(pool), std::max(1, threads));
    const i64 Mb = block_rows(p), blocks = ceil_div(M, Mb);
    const bool parallel = T > 1 && M * N * K >= kParallelMin;
    // One block, or too few for the threads: all rows at once, qgemm splitting the columns.
    if (blocks == 1 || (parallel && blocks < 2 * T)) {
        product(0, M, work, parallel ? pool : nullptr);
        return;
    }
    if (!parallel) {
        for (i64 b = 0; b < blocks; ++b) product(b * Mb, std::min(Mb, M - b * Mb), work, nullptr);
        return;
    }
    // Many: a contiguous run of blocks for each thread, each block's patches and product in its
    // own scratch while they are in cache.
    const i64 per = scratch(p, Mb).floats();
    parallel_for(pool, T, [&](i64 t) {
        for (i64 b = t * blocks / T; b < (t + 1) * blocks / T; ++b)
            product(b * Mb, std::min(Mb, M - b * Mb), work + t * per, nullptr);
    });
}

}  // namespace graft::cpu::gemm
