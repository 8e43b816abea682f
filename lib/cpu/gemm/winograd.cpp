// Winograd F(4x4,3x3) and F(2x2,3x3): weight transform, tile blocking, threading and the
// per-ISA transforms (winograd_impl.inc compiled three times: portable 4-float vectors, AVX2,
// AVX-512).
#include "cpu/gemm/winograd.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "cpu/gemm/ukernel.hpp"
#include "cpu/simd.hpp"
#include "cpu/threadpool.hpp"

namespace graft::cpu::gemm {

namespace {

using i64 = std::int64_t;
using InputFn = void (*)(const float* const*, float*, i64, i64);
using OutputFn = void (*)(const float*, i64, float* const*, const float* const*, const float*, bool, i64);

struct TfFns {
    InputFn input[2];  // [0]: F(2x2), [1]: F(4x4)
    OutputFn output[2];
};

namespace wg_generic {
using V = simd::Vec4;
#include "cpu/gemm/winograd_impl.inc"
const TfFns fns{{&input_tile<2>, &input_tile<4>}, {&output_tile<2>, &output_tile<4>}};
}  // namespace wg_generic

#ifdef GRAFT_SIMD_X86
GRAFT_SIMD_AVX2_BEGIN
namespace wg_avx2 {
using V = simd::Avx2;
#include "cpu/gemm/winograd_impl.inc"
const TfFns fns{{&input_tile<2>, &input_tile<4>}, {&output_tile<2>, &output_tile<4>}};
}  // namespace wg_avx2
GRAFT_SIMD_AVX2_END

GRAFT_SIMD_AVX512_BEGIN
namespace wg_avx512 {
using V = simd::Avx512;
#include "cpu/gemm/winograd_impl.inc"
const TfFns fns{{&input_tile<2>, &input_tile<4>}, {&output_tile<2>, &output_tile<4>}};
}  // namespace wg_avx512
GRAFT_SIMD_AVX512_END
#endif

inline i64 ceil_div(i64 a, i64 b) { return (a + b - 1) / b; }

// Tuning, measured on an AVX-512 Zen 5 (1 MB L2 per core, 32 MB L3, ~27 GB/s per core).
constexpr i64 kL2Budget = 1 << 20;  // bytes of V + M per thread, about the L2 ...
constexpr i64 kSlotMax = 4 << 20;   // ... but up to this when U is large (see the constructor)
constexpr i64 kMinTiles = 8, kMaxTiles = 64;
constexpr i64 kGroup = 64;              // output channels per product group
constexpr i64 kKc = 256;                // k per micro-kernel call
constexpr i64 kKcStream = 64;           // ... when U streams from memory (finer prefetching)
constexpr i64 kStreamBytes = 16 << 20;  // U larger than this is assumed not to stay in L3
constexpr i64 kParallelMin = 1 << 18;   // tiles * points * Cin * Cout below this: one thread
constexpr int kMaxSlots = 16;           // most threads one kernel uses (scratch regions)

const TfFns& transforms(Isa isa) { return GRAFT_SIMD_SELECT(isa, wg_generic::fns, wg_avx2::fns, wg_avx512::fns); }

/// Floats between consecutive transform points in V and M: whole cache lines plus one, so the
/// points of a tile do not all fall in the same L1 set (4 KB aliasing when nt * C * 4 is a
/// multiple of 4096: 14x14x256 at batch 32 ran 25% slower).
inline i64 point_stride(i64 floats) { return ceil_div(floats, 16) * 16 + 16; }

// G (6x3) of F(4x4,3x3) and (4x3) of F(2x2,3x3).
constexpr double kG4[6][3] = {{1.0 / 4, 0, 0},
                              {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                              {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                              {1.0 / 24, 1.0 / 12, 1.0 / 6},
                              {1.0 / 24, -1.0 / 12, 1.0 / 6},
                              {0, 0, 1}};
constexpr double kG2[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};

}  // namespace

/// A unit of work: tiles [t0, t0 + nt) and output channels [c0, c1); `stream`: U comes from
/// memory (read once or twice per run, or too large for L3), so prefetch it.
struct Winograd::Block {
    i64 t0, nt, c0, c1;
    bool stream;
};

bool Winograd::applicable(const Conv2DParams& p) {
    return p.kh == 3 && p.kw == 3 && p.stride_h == 1 && p.stride_w == 1 && p.dil_h == 1 && p.dil_w == 1 && p.n > 0 &&
           p.oh > 0 && p.ow > 0 && p.cin > 0 && p.cout > 0;
}

int Winograd::choose(const Conv2DParams& p) {
    if (!applicable(p)) return 0;
    if (const char* v = std::getenv("GRAFT_WINOGRAD"); v && std::string(v) == "0") return 0;
    // Measured on one thread with the weights cold, as in a real network (x: speedup over the
    // implicit GEMM). Below 16 channels the transforms run partly on scalar tails (Cin = Cout = 8
    // at batch 32: 0.65x). Fewer than 8 tiles make too short products, and U (4x or 1.8x the
    // weights) too costly to read: 1x4x4x64 0.76x (F(4x4)) / 0.87x (F(2x2)). F(4x4) wins from 16
    // tiles (14x14x256: 2.0x vs 1.8x; 4x7x7x512: 1.8x vs 1.5x), F(2x2) below that when U is
    // large (7x7x512: 0.93x vs 1.26x; 2x8x8x256: 1.46x vs 1.85x; 1x12x12x128: 1.47x vs 1.63x)
    // but not when it is small (1x12x12x32: 1.19x vs 0.96x).
    if (p.cin < 16 || p.cout < 16) return 0;
    const i64 tiles4 = p.n * ceil_div(p.oh, 4) * ceil_div(p.ow, 4);
    const i64 tiles2 = p.n * ceil_div(p.oh, 2) * ceil_div(p.ow, 2);
    if (tiles4 >= 2 * kMinTiles || (tiles4 >= kMinTiles && p.cin * p.cout < 128 * 128)) return 4;
    if (tiles2 >= kMinTiles) return 2;
    return 0;
}

std::vector<float> Winograd::transform_weights(const float* w, i64 cin, i64 cout, int tile) {
    const int a = tile + 2, np = a * a;
    const double(*G)[3] = tile == 4 ? kG4 : kG2;
    const i64 psz = static_cast<i64>(packed_size(cin, cout));
    std::vector<float> u(static_cast<std::size_t>(np * psz));
    std::vector<float> point(static_cast<std::size_t>(np * cin * cout));  // [np][cin][cout]
    for (i64 ci = 0; ci < cin; ++ci)
        for (i64 co = 0; co < cout; ++co) {
            double g[3][3], t[6][3];
            for (int ky = 0; ky < 3; ++ky)
                for (int kx = 0; kx < 3; ++kx) g[ky][kx] = w[((ky * 3 + kx) * cin + ci) * cout + co];
            for (int i = 0; i < a; ++i)
                for (int kx = 0; kx < 3; ++kx) t[i][kx] = G[i][0] * g[0][kx] + G[i][1] * g[1][kx] + G[i][2] * g[2][kx];
            for (int i = 0; i < a; ++i)
                for (int j = 0; j < a; ++j)
                    point[static_cast<std::size_t>(((i * a + j) * cin + ci) * cout + co)] =
                        static_cast<float>(t[i][0] * G[j][0] + t[i][1] * G[j][1] + t[i][2] * G[j][2]);
        }
    for (i64 pt = 0; pt < np; ++pt) pack_b(point.data() + pt * cin * cout, cout, cin, cout, u.data() + pt * psz);
    return u;
}

Winograd::Winograd(const Conv2DParams& p, int tile, const float* u, int slots)
    : p_(p), u_(u), zeros_(static_cast<std::size_t>(p.cin), 0.f) {
    m_ = tile == 2 ? 2 : 4;
    a_ = m_ + 2;
    np_ = a_ * a_;
    th_ = ceil_div(p.oh, m_);
    tw_ = ceil_div(p.ow, m_);
    tiles_ = p.n * th_ * tw_;
    ng_ = std::min<i64>(kGroup, ceil_div(p.cout, kPanel) * kPanel);
    // U is read once per block, from memory when it is large or read rarely: blocks as large as
    // L2 (28x28x128 at batch 1: 2 blocks of 25 tiles run 15-20% faster than 3-4 blocks of 13-18
    // that fit L2 with room to spare), larger still when Cin x Cout is large (V then spills to
    // L3, which costs less; 7x7x512 at batch 32 runs 2.3x faster than the implicit GEMM with
    // 50-64 tiles per block, 1.3x with 16).
    const i64 per_tile = np_ * 4 * (p.cin + ng_);
    const i64 want = std::max(kL2Budget / per_tile, p.cin * p.cout / 4096);
    nt_max_ = std::min({tiles_, std::clamp(want, kMinTiles, kMaxTiles), std::max<i64>(1, kSlotMax / per_tile)});
    slot_floats_ = np_ * (point_stride(nt_max_ * p.cin) + point_stride(nt_max_ * ng_));
    slots_ = std::clamp(slots, 1, kMaxSlots);
}

std::size_t Winograd::workspace_floats() const noexcept { return static_cast<std::size_t>(slot_floats_ * slots_); }

void Winograd::run_block(const Block& b, const float* x, float* y, const Epilogue& e, float* v, float* m,
                         bool transform) const {
    const Conv2DParams& p = p_;
    const Isa isa = active_isa();
    const TfFns& tf = transforms(isa);
    const IsaKernels& ik = micro_kernels(isa);
    const int f = m_ == 4 ? 1 : 0;
    const i64 nt = b.nt, cin = p.cin, cout = p.cout, per_image = th_ * tw_;
    const i64 vps = point_stride(nt * cin), mps = point_stride(nt * ng_);
    const float* src[36];
    float* dst[16];
    const float* res[16];

    if (transform)
        for (i64 t = 0; t < nt; ++t) {
            const i64 tile = b.t0 + t, n = tile / per_image, ty = (tile % per_image) / tw_, tx = tile % tw_;
            const float* xn = x + n * p.h * p.w * cin;
            for (int i = 0; i < a_; ++i) {
                const i64 iy = ty * m_ - p.pad_top + i;
                for (int j = 0; j < a_; ++j) {
                    const i64 ix = tx * m_ - p.pad_left + j;
                    src[i * a_ + j] =
                        iy < 0 || iy >= p.h || ix < 0 || ix >= p.w ? zeros_.data() : xn + (iy * p.w + ix) * cin;
                }
            }
            tf.input[f](src, v + t * cin, vps, cin);
        }

    const i64 psz = static_cast<i64>(packed_size(cin, cout));
    const i64 kc = ceil_div(cin, ceil_div(cin, b.stream ? kKcStream : kKc));
    const bool relu = e.act && e.act->kind == Act::relu;
    const bool other_act = e.act && e.act->kind != Act::relu && e.act->kind != Act::linear;
    const float* ptr[kMaxRows];
    for (i64 g0 = b.c0; g0 < b.c1; g0 += ng_) {
        const i64 gw = std::min(ng_, b.c1 - g0), gpan = ceil_div(gw, kPanel);
        // U for one (point, group) is contiguous: [gpan panels][cin][16]. While one point's
        // products run, the next point's U is prefetched, a little after each micro-kernel call
        // (with few tiles, streaming U from memory costs as much as the products).
        const i64 ulen = gpan * cin * kPanel;
        const i64 calls = ceil_div(cin, kc) * ceil_div(nt, ik.mr) * ceil_div(gpan, ik.pref_p[std::min<i64>(ik.mr, nt)]);
        const i64 lines_per_call = ceil_div(ulen, calls * 16);
        for (i64 pt = 0; pt < np_; ++pt) {
            const float* a = v + pt * vps;
            float* c = m + pt * mps;
            const float* u = u_ + pt * psz + (g0 / kPanel) * cin * kPanel;
            const float* next = !b.stream         ? nullptr
                                : pt + 1 < np_    ? u + psz
                                : g0 + ng_ < b.c1 ? u_ + ((g0 + ng_) / kPanel) * cin * kPanel
                                                  : nullptr;
            const i64 next_len = pt + 1 < np_ ? ulen : ceil_div(std::min(ng_, b.c1 - g0 - ng_), kPanel) * kPanel * cin;
            i64 pf = 0;  // floats of `next` prefetched so far
            for (i64 k0 = 0; k0 < cin; k0 += kc) {
                const i64 len = std::min(kc, cin - k0);
                for (i64 r0 = 0; r0 < nt; r0 += ik.mr) {
                    const int rows = static_cast<int>(std::min<i64>(ik.mr, nt - r0));
                    for (int r = 0; r < rows; ++r) ptr[r] = a + (r0 + r) * cin + k0;
                    for (i64 pi = 0; pi < gpan;) {
                        int P = ik.pref_p[rows];
                        while (P > 1 && pi + P > gpan) P /= 2;
                        UkArgs g;
                        g.a = ptr;
                        g.nseg = 1;
                        g.len = len;
                        g.b = u + pi * cin * kPanel + k0 * kPanel;
                        g.ldb = kPanel;
                        g.bps = cin * kPanel;
                        g.c = c + r0 * ng_ + pi * kPanel;
                        g.ldc = ng_;
                        g.cols = static_cast<int>(std::min<i64>(P * kPanel, gw - pi * kPanel));
                        g.load_c = k0 > 0;
                        g.bias = nullptr;
                        g.last = false;
                        g.res = nullptr;
                        g.ldr = 0;
                        g.relu = false;
                        g.clamp = false;
                        g.lo = g.hi = 0.f;
                        ik.uk[rows][P == 1 ? 0 : P == 2 ? 1 : 2](g);
                        pi += P;
                        if (next && pf < next_len) {
                            const i64 end = std::min(next_len, pf + lines_per_call * 16);
                            for (; pf < end; pf += 16) __builtin_prefetch(next + pf, 0, 3);
                        }
                    }
                }
            }
        }
        const int outs = m_ * m_;
        for (i64 t = 0; t < nt; ++t) {
            const i64 tile = b.t0 + t, n = tile / per_image, ty = (tile % per_image) / tw_, tx = tile % tw_;
            for (int i = 0; i < m_; ++i)
                for (int j = 0; j < m_; ++j) {
                    const i64 oy = ty * m_ + i, ox = tx * m_ + j;
                    const int k = i * m_ + j;
                    const bool in = oy < p.oh && ox < p.ow;
                    const i64 pix = (n * p.oh + oy) * p.ow + ox;
                    dst[k] = in ? y + pix * cout + g0 : nullptr;
                    res[k] = in && e.residual ? e.residual + pix * e.ldr + g0 : nullptr;
                }
            tf.output[f](m + t * ng_, mps, dst, res, e.bias ? e.bias + g0 : nullptr, relu, gw);
            if (other_act)
                for (int k = 0; k < outs; ++k)
                    if (dst[k]) activate(dst[k], dst[k], gw, *e.act);
        }
    }
}

void Winograd::run(const float* x, float* y, const Epilogue& e, float* workspace, ThreadPool* pool) const {
    // Work items: (tile block, output channel part), spread evenly over `workers` tasks; task w
    // owns scratch region w and does a contiguous run of items (the parts of one block share its
    // input transform when they land on the same task).
    const i64 threads = tiles_ * np_ * p_.cin * p_.cout < kParallelMin ? 1 : std::min<i64>(pool_size(pool), slots_);
    const i64 npan = ceil_div(p_.cout, kPanel);
    i64 nb = ceil_div(tiles_, nt_max_), parts = 1;
    if (threads > 1) {
        if (nb < threads) {
            // Few tiles: split the output channels (each thread reads part of U) ...
            parts = std::min(npan, ceil_div(threads, nb));
            if (nb * parts < threads) nb = std::min(tiles_, threads);  // ... or, with few channels, the tiles
        } else if (nb % threads != 0) {
            // Equal blocks, a multiple of the threads, unless that makes them too small.
            const i64 even = ceil_div(nb, threads) * threads;
            if (ceil_div(tiles_, even) >= kMinTiles) nb = even;
        }
    }
    const i64 nt = ceil_div(tiles_, nb);
    nb = ceil_div(tiles_, nt);
    const i64 ppp = ceil_div(npan, parts);  // panels per part
    parts = ceil_div(npan, ppp);
    const i64 items = nb * parts, workers = std::min(threads, items);
    // U comes from memory when each task reads it only once or twice, or when it cannot stay in L3.
    const bool stream = ceil_div(nb, workers) <= 2 || np_ * 4 * p_.cin * p_.cout > kStreamBytes;
    parallel_for(pool, workers, [&](i64 w) {
        float* v = workspace + w * slot_floats_;
        float* m = v + np_ * point_stride(nt_max_ * p_.cin);
        i64 last = -1;
        for (i64 it = w * items / workers, end = (w + 1) * items / workers; it < end; ++it) {
            const i64 blk = it / parts, part = it % parts;
            Block b{blk * nt, std::min(nt, tiles_ - blk * nt), part * ppp * kPanel,
                    std::min(p_.cout, (part + 1) * ppp * kPanel), stream};
            run_block(b, x, y, e, v, m, blk != last);
            last = blk;
        }
    });
}

}  // namespace graft::cpu::gemm
