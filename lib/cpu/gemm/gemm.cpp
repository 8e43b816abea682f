// The GEMM driver: instruction-set dispatch, B packing, cache blocking, threading, epilogues,
// and the implicit-GEMM convolution (row pointers into the NHWC input; no im2col buffer
// except a per-tile copy when Cin is tiny).
#include "cpu/gemm/gemm.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>

#include "cpu/caches.hpp"
#include "cpu/gemm/gemv.hpp"
#include "cpu/gemm/ukernel.hpp"
#include "cpu/simd.hpp"
#include "cpu/threadpool.hpp"

namespace graft::cpu::gemm {

namespace {

using i64 = std::int64_t;

constexpr i64 kKcMin = 256;            // k per block at least (k_block)
constexpr i64 kBBlockFloats = 65536;   // B floats per block (256 KB, kept in L2)
constexpr i64 kIm2colMaxK = 1024;      // per-tile im2col copy for convolutions with tiny Cin
constexpr i64 kMaxSeg = 64;            // taps per k block
constexpr i64 kMaxBlockK = 1024;       // largest k block (nseg * len)
constexpr i64 kParallelMin = 1 << 15;  // M*N*K below this runs on one thread
// The first row tile of each block of B reads it from L3 or memory (later tiles find it in L2):
// that tile prefetches each panel this many k rows (2 KB) ahead, into L2. Zen 4, one thread,
// A/B alternating: the transformer at batch 1 (64-row products, B 0.25-1 MB) median 4.18 -> 4.09
// ms; mlp at batch 32 (32 rows, every tile a quarter of the work) 0.378 -> 0.380. Into L1
// instead: 4.13 and 0.381; in every tile: slower (4.18-4.25). Not for convolutions (MobileNet's
// small-K products measured no better).
constexpr i64 kFirstTilePrefetch = 32;

alignas(64) const float kZeros[kMaxBlockK] = {};

std::atomic<int> g_isa{-1};

const IsaKernels* table_for(Isa isa) {
    switch (isa) {
        case Isa::avx512: return avx512_kernels();
        case Isa::avx2: return avx2_kernels();
        default: return generic_kernels();
    }
}

bool cpu_supports(Isa isa) {
    if (isa == Isa::generic) return true;
#ifdef GRAFT_SIMD_X86
    __builtin_cpu_init();
    if (isa == Isa::avx2) return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && avx2_kernels();
    if (isa == Isa::avx512) return __builtin_cpu_supports("avx512f") && avx512_kernels();
#endif
    return false;
}

const IsaKernels& kernels() { return micro_kernels(active_isa()); }

inline i64 ceil_div(i64 a, i64 b) { return (a + b - 1) / b; }

/// k per block: as deep as keeps a tile's rows of A (mr x k floats) within 3/4 of the L1 data
/// cache while B streams past them from L2, from kKcMin to kMaxBlockK. Deeper blocks load and
/// store each tile of C fewer times and walk A fewer times. On Zen 3 (6-row tiles, 32 KiB L1:
/// 1024 rather than 256) with B coming from L3, as in a model: 32x512x784 76 -> 85 GFLOP/s,
/// 64x256x1024 90 -> 96, 49x320x960 88 -> 94.
i64 k_block(const IsaKernels& ik) {
    static const i64 l1 = static_cast<i64>(cache_bytes(1));
    return std::clamp<i64>(l1 * 3 / 4 / (ik.mr * static_cast<i64>(sizeof(float))), kKcMin, kMaxBlockK);
}

/// One block of k: nseg segments of len consecutive k, starting at B row kstart.
/// For a convolution a segment is (tap, channel range); for a matrix it is one range.
struct KBlock {
    i64 kstart, nseg, len, tap0, c0;
};

/// Everything a thread needs to compute part of the product.
struct Job {
    const IsaKernels* ik;
    i64 M, N, K;
    // A: a matrix (conv == nullptr) or a convolution input.
    const float* a;
    i64 lda;
    const float* a2 = nullptr;  // with a2: columns k >= k1 of A's rows are a2's (row stride lda2)
    i64 lda2 = 0, k1 = 0;
    const Conv2DParams* conv;
    bool im2col;  // conv with tiny Cin: copy each tile's rows into a buffer ...
    bool row_segments;  // ... only those with taps in the padding along W: one segment per kernel row
    std::vector<KBlock> blocks;
    BMatrix b;
    float* c;
    i64 ldc;
    Epilogue e;
    bool relu, clamp, other_act;
    float lo, hi;  // the clamp's bounds
};

/// An output pixel of a convolution's implicit A (image, row, column): the next tile's first row.
struct Pixel {
    i64 n = 0, oy = 0, ox = 0;
};
Pixel pixel_of(const Job& j, i64 m) {
    if (!j.conv) return {};
    const i64 ow = j.conv->ow, hw = j.conv->oh * ow;
    return {m / hw, m % hw / ow, m % ow};
}

/// Row pointers of one tile for one k block: ptr[s * kMaxRows + r]. A convolution's rows start
/// at pixel `at`, which moves on by `rows` (stepping, not dividing: integer division costs as much
/// as a small stem's tile of multiply-adds).
void fill_pointers(const Job& j, const KBlock& kb, i64 m, int rows, Pixel& at, const float** ptr, float* abuf) {
    if (!j.conv) {
        for (i64 s = 0; s < kb.nseg; ++s) {  // A in two parts: no segment straddles k1
            const i64 k = kb.kstart + s * kb.len;
            const bool second = j.a2 && k >= j.k1;
            for (int r = 0; r < rows; ++r)
                ptr[s * kMaxRows + r] = second ? j.a2 + (m + r) * j.lda2 + (k - j.k1) : j.a + (m + r) * j.lda + k;
        }
        return;
    }
    const Conv2DParams& p = *j.conv;
    if (j.im2col && j.row_segments && p.dil_w == 1 && at.ox + rows <= p.ow) {
        // The whole tile in one output row, clear of the left and right padding (the stem's
        // usual tile): each kernel row's pointers step by stride_w pixels.
        const i64 ix0 = at.ox * p.stride_w - p.pad_left, ix_last = ix0 + (rows - 1) * p.stride_w;
        if (ix0 >= 0 && ix_last + p.kw <= p.w) {
            const i64 iy0 = at.oy * p.stride_h - p.pad_top, step = p.stride_w * p.cin;
            const float* xn = j.a + at.n * p.h * p.w * p.cin;
            for (i64 ky = 0; ky < p.kh; ++ky) {
                const i64 iy = iy0 + ky * p.dil_h;
                const float** row = ptr + ky * kMaxRows;
                if (iy < 0 || iy >= p.h) {
                    for (int r = 0; r < rows; ++r) row[r] = kZeros;
                    continue;
                }
                const float* first = xn + (iy * p.w + ix0) * p.cin;
                for (int r = 0; r < rows; ++r) row[r] = first + r * step;
            }
            if ((at.ox += rows) == p.ow) {
                at.ox = 0;
                if (++at.oy == p.oh) at.oy = 0, ++at.n;
            }
            return;
        }
    }
    for (int r = 0; r < rows; ++r) {
        const i64 n = at.n, oy = at.oy, ox = at.ox;
        if (++at.ox == p.ow) {
            at.ox = 0;
            if (++at.oy == p.oh) at.oy = 0, ++at.n;
        }
        const i64 iy0 = oy * p.stride_h - p.pad_top, ix0 = ox * p.stride_w - p.pad_left;
        const float* xn = j.a + n * p.h * p.w * p.cin;
        if (j.im2col) {
            const bool row_inside = p.dil_w == 1 && ix0 >= 0 && ix0 + p.kw <= p.w;
            if (j.row_segments && row_inside) {  // read in place: kernel row ky is kw * cin consecutive floats
                for (i64 ky = 0; ky < p.kh; ++ky) {
                    const i64 iy = iy0 + ky * p.dil_h;
                    ptr[ky * kMaxRows + r] = iy >= 0 && iy < p.h ? xn + (iy * p.w + ix0) * p.cin : kZeros;
                }
                continue;
            }
            // The whole k range (taps x Cin) of this row, contiguous.
            float* dst = abuf + r * j.K;
            for (i64 ky = 0; ky < p.kh; ++ky) {
                const i64 iy = iy0 + ky * p.dil_h;
                if (row_inside && iy >= 0 && iy < p.h) {  // the row's taps are kw * cin consecutive floats
                    std::memcpy(dst, xn + (iy * p.w + ix0) * p.cin, static_cast<std::size_t>(p.kw * p.cin) * sizeof(float));
                    dst += p.kw * p.cin;
                    continue;
                }
                for (i64 kx = 0; kx < p.kw; ++kx, dst += p.cin) {
                    const i64 ix = ix0 + kx * p.dil_w;
                    if (iy < 0 || iy >= p.h || ix < 0 || ix >= p.w)
                        for (i64 c = 0; c < p.cin; ++c) dst[c] = 0.f;
                    else
                        for (i64 c = 0; c < p.cin; ++c) dst[c] = xn[(iy * p.w + ix) * p.cin + c];
                }
            }
            for (i64 ky = 0; ky < (j.row_segments ? p.kh : 1); ++ky) ptr[ky * kMaxRows + r] = abuf + r * j.K + ky * p.kw * p.cin;
            continue;
        }
        for (i64 s = 0; s < kb.nseg; ++s) {
            const i64 tap = kb.tap0 + s;
            const i64 iy = iy0 + (tap / p.kw) * p.dil_h, ix = ix0 + (tap % p.kw) * p.dil_w;
            ptr[s * kMaxRows + r] = (iy < 0 || iy >= p.h || ix < 0 || ix >= p.w)
                                        ? kZeros
                                        : xn + (iy * p.w + ix) * p.cin + kb.c0;
        }
    }
}

/// The micro-kernel arguments of the tile at rows m, panel p, for k block kb; b is null unless B
/// is packed (the caller points it at the plain matrix or its padded tail).
UkArgs tile_args(const Job& j, const KBlock& kb, i64 m, i64 p, const float* const* ptr, bool first, bool last, int cols) {
    UkArgs g;
    g.a = ptr;
    g.nseg = kb.nseg;
    g.len = kb.len;
    const i64 packed_ps = (j.b.panel_k > 0 ? j.b.panel_k : j.K) * kPanel;
    g.b = j.b.packed ? j.b.data + p * packed_ps + kb.kstart * kPanel : nullptr;
    g.ldb = kPanel;
    g.bps = packed_ps;
    g.c = j.c + m * j.ldc + p * kPanel;
    g.ldc = j.ldc;
    g.cols = cols;
    g.load_c = j.e.accumulate || !first;
    g.bias = j.e.bias ? j.e.bias + p * kPanel : nullptr;
    g.last = last;
    g.res = j.e.residual ? j.e.residual + m * j.e.ldr + p * kPanel : nullptr;
    g.ldr = j.e.ldr;
    g.relu = j.relu;
    g.clamp = j.clamp;
    g.lo = j.lo, g.hi = j.hi;
    return g;
}

/// Rows [m0, m1) x panels [p0, p1) of the product, on the calling thread.
void run_range(const Job& j, i64 m0, i64 m1, i64 p0, i64 p1) {
    const IsaKernels& ik = *j.ik;
    const i64 npanels = ceil_div(j.N, kPanel);
    const bool ragged = j.N % kPanel != 0;
    i64 max_block_k = 0;
    for (const auto& kb : j.blocks) max_block_k = std::max(max_block_k, kb.nseg * kb.len);
    const i64 panels_per_block = std::max<i64>(1, kBBlockFloats / (std::max<i64>(1, max_block_k) * kPanel));
    alignas(64) float tail[kMaxBlockK * kPanel];
    alignas(64) float abuf[kMaxRows * kIm2colMaxK];
    const float* ptr[kMaxSeg * kMaxRows];

    for (i64 pb = p0; pb < p1; pb += panels_per_block) {
        const i64 pe = std::min(p1, pb + panels_per_block);
        for (std::size_t bi = 0; bi < j.blocks.size(); ++bi) {
            const KBlock& kb = j.blocks[bi];
            const bool first = bi == 0, last = bi + 1 == j.blocks.size();
            const i64 bk = kb.nseg * kb.len;
            const bool tail_here = !j.b.packed && ragged && pe == npanels;
            if (tail_here) {
                const i64 n0 = (npanels - 1) * kPanel, w = j.N - n0;
                for (i64 k = 0; k < bk; ++k)
                    for (i64 c = 0; c < kPanel; ++c)
                        tail[k * kPanel + c] = c < w ? j.b.data[(kb.kstart + k) * j.b.ld + n0 + c] : 0.f;
            }
            // Where runs of full tiles end: the last whole panel of the block, before a ragged
            // panel copied to `tail` or the last two panels when they make a 1.5-panel tile.
            i64 group_end = std::min(pe, j.N / kPanel);
            if (tail_here) group_end = std::min(group_end, npanels - 1);
            if (j.b.packed && ik.wide_rows && pe == npanels && npanels >= 2 && j.N % kPanel != 0 &&
                j.N % kPanel <= kPanel / 2)
                group_end = std::min(group_end, npanels - 2);
            // Row tiles of even heights (32 rows: 6, 6, 5, 5, 5, 5 rather than five of 6 and a
            // 2-row tile, which has too few accumulators to hide the FMA latency).
            const i64 mtiles = ceil_div(m1 - m0, ik.mr), short_rows = mtiles * ik.mr - (m1 - m0);
            const i64 tall = mtiles - std::min(short_rows, mtiles);  // tiles of mr rows; the rest mr - 1
            i64 m = m0;
            Pixel at = pixel_of(j, m0);
            for (i64 t = 0; t < mtiles; ++t) {
                const int rows = static_cast<int>(t < tall ? ik.mr : std::min<i64>(ik.mr - 1, m1 - m));
                fill_pointers(j, kb, m, rows, at, ptr, abuf);
                for (i64 p = pb; p < pe;) {
                    // The last 17-24 columns (both their panels in this block): 1.5-panel tiles.
                    const i64 left = j.N - p * kPanel;
                    if (j.b.packed && ik.wide_rows && left > kPanel && left <= kPanel + kPanel / 2 && p + 2 == pe) {
                        UkArgs g = tile_args(j, kb, m, p, ptr, first, last, static_cast<int>(left));
                        // Even parts (6 rows: 3 + 3, each with enough accumulators to hide the latency).
                        const int parts = (rows + ik.wide_rows - 1) / ik.wide_rows, each = (rows + parts - 1) / parts;
                        for (int r0 = 0; r0 < rows; r0 += each) {
                            const int n = std::min(each, rows - r0);
                            UkArgs h = g;
                            h.a = ptr + r0;
                            h.c = g.c + r0 * j.ldc;
                            h.res = g.res ? g.res + r0 * j.e.ldr : nullptr;
                            ik.uk_wide[n](h);
                            if (last && j.other_act)
                                for (int r = 0; r < n; ++r) activate(h.c + r * j.ldc, h.c + r * j.ldc, h.cols, *j.e.act);
                        }
                        p += 2;
                        continue;
                    }
                    int P = ik.pref_p[rows];
                    while (P > 1 && p + P > pe) P /= 2;
                    if (tail_here) {  // the ragged panel runs alone, from the padded copy
                        if (p == npanels - 1) P = 1;
                        else
                            while (p + P > npanels - 1) P /= 2;
                    }
                    const bool use_tail = tail_here && p == npanels - 1;
                    UkArgs g = tile_args(j, kb, m, p, ptr, first, last,
                                         static_cast<int>(std::min<i64>(P * kPanel, j.N - p * kPanel)));
                    if (use_tail) {
                        g.b = tail;
                        g.ldb = kPanel;
                        g.bps = kPanel;
                    } else if (!j.b.packed) {
                        g.b = j.b.data + kb.kstart * j.b.ld + p * kPanel;
                        g.ldb = j.b.ld;
                        g.bps = kPanel;
                    }
                    // Full tiles of P panels side by side in one call, up to the ragged panel
                    // or the 1.5-panel tiles (small K: the calls cost as much as the products).
                    if (!use_tail && p + P <= group_end) {
                        g.tiles = static_cast<int>((group_end - p) / P);
                        g.cols = P * kPanel;
                    }
                    if (t == 0 && j.b.packed && !j.conv) g.prefetch = kFirstTilePrefetch;
                    ik.uk[rows][P == 1 ? 0 : P == 2 ? 1 : 2](g);
                    if (last && j.other_act)
                        for (int r = 0; r < rows; ++r)
                            activate(g.c + r * j.ldc, g.c + r * j.ldc, g.cols * g.tiles, *j.e.act);
                    p += P * g.tiles;
                }
                m += rows;
            }
        }
    }
}

void run_job(const Job& j, ThreadPool* pool) {
    const int T = pool_size(pool);
    const i64 mr = j.ik->mr;
    const i64 mt = ceil_div(j.M, mr), np = ceil_div(j.N, kPanel);
    if (T <= 1 || j.M * j.N * j.K < kParallelMin || (mt < 2 && np < 2)) {
        run_range(j, 0, j.M, 0, np);
        return;
    }
    // Split the larger operand: a thread reads all of the other one and its share of this one.
    // By rows, every thread streams all of B (the weights, from L3 or memory in a model); by
    // columns, all of A. The transformer at batch 1 (M = 64 rows, N = 256-1024 columns, which
    // went by rows while there were 4 row tiles per thread) on two threads: 2.88 -> 2.72 ms.
    const bool by_rows = np < T || (j.M > j.N && mt >= T);
    if (by_rows) {
        const i64 chunk = ceil_div(mt, T) * mr;
        const i64 tasks = ceil_div(j.M, chunk);
        parallel_for(pool, tasks, [&](i64 t) { run_range(j, t * chunk, std::min(j.M, (t + 1) * chunk), 0, np); });
    } else {
        const i64 chunk = ceil_div(np, T);
        const i64 tasks = ceil_div(np, chunk);
        parallel_for(pool, tasks, [&](i64 t) { run_range(j, 0, j.M, t * chunk, std::min(np, (t + 1) * chunk)); });
    }
}

/// Which activations the micro-kernels apply themselves (clamp_form); any other runs on each
/// finished tile.
void set_act(Job& j) {
    const ClampForm f = clamp_form(j.e.act);
    j.relu = f.relu, j.clamp = f.clamp, j.other_act = f.other;
    j.lo = f.lo, j.hi = f.hi;
}

/// A product's job without its A or its k blocks.
Job make_job(i64 M, i64 N, i64 K, const BMatrix& B, float* C, i64 ldc, const Epilogue& e) {
    Job j{};
    j.ik = &kernels();
    j.M = M, j.N = N, j.K = K;
    j.b = B;
    j.c = C, j.ldc = ldc;
    j.e = e;
    set_act(j);
    return j;
}

/// Blocks of one segment each over k in [k0, k1), as even as k_block allows.
void add_even_blocks(Job& j, i64 k0, i64 k1) {
    if (k1 <= k0) return;
    const i64 len = ceil_div(k1 - k0, ceil_div(k1 - k0, k_block(*j.ik)));
    for (i64 k = k0; k < k1; k += len) j.blocks.push_back({k, 1, std::min(len, k1 - k), 0, k});
}

}  // namespace

const IsaKernels& micro_kernels(Isa isa) {
    const IsaKernels* k = table_for(isa);
    return k ? *k : *generic_kernels();
}

Isa detected_isa() {
    if (cpu_supports(Isa::avx512)) return Isa::avx512;
    if (cpu_supports(Isa::avx2)) return Isa::avx2;
    return Isa::generic;
}

Isa active_isa() {
    int v = g_isa.load(std::memory_order_relaxed);
    if (v >= 0) return static_cast<Isa>(v);
    Isa isa = detected_isa();
    if (const char* env = std::getenv("GRAFT_ISA")) {
        const std::string s = env;
        Isa want = s == "generic" ? Isa::generic : s == "avx2" ? Isa::avx2 : s == "avx512" ? Isa::avx512 : isa;
        if (cpu_supports(want)) isa = want;
    }
    g_isa.store(static_cast<int>(isa), std::memory_order_relaxed);
    return isa;
}

bool set_isa(Isa isa) {
    if (!cpu_supports(isa)) return false;
    g_isa.store(static_cast<int>(isa), std::memory_order_relaxed);
    return true;
}

const char* isa_name(Isa isa) { return table_for(isa) ? table_for(isa)->name : "none"; }

std::size_t packed_size(i64 K, i64 N) {
    return static_cast<std::size_t>(ceil_div(std::max<i64>(N, 0), kPanel) * kPanel * std::max<i64>(K, 0));
}

void pack_column_groups(const float* w, i64 ldw, i64 K, i64 N, i64 group, float* out) {
    for (i64 n0 = 0; n0 < N; n0 += group) {
        const i64 cols = std::min(group, N - n0), width = ceil_div(cols, kPanel) * kPanel;
        float* dst = out + n0 * K;
        for (i64 k = 0; k < K; ++k, dst += width) {
            std::memcpy(dst, w + k * ldw + n0, static_cast<std::size_t>(cols) * sizeof(float));
            for (i64 c = cols; c < width; ++c) dst[c] = 0.f;
        }
    }
}

void epilogue_only(i64 M, i64 n0, i64 n1, float* C, i64 ldc, const Epilogue& e) {
    for (i64 m = 0; m < M; ++m) {
        float* c = C + m * ldc;
        if (!e.accumulate)
            for (i64 n = n0; n < n1; ++n) c[n] = e.bias ? e.bias[n] : 0.f;
        if (e.residual)
            for (i64 n = n0; n < n1; ++n) c[n] += e.residual[m * e.ldr + n];
        if (e.act && e.act->kind != Act::linear) activate(c + n0, c + n0, n1 - n0, *e.act);
    }
}

void pack_b(const float* w, i64 ldw, i64 K, i64 N, float* out) { pack_column_groups(w, ldw, K, N, kPanel, out); }

std::vector<float> pack_b(const float* w, i64 ldw, i64 K, i64 N) {
    std::vector<float> out(packed_size(K, N));
    pack_b(w, ldw, K, N, out.data());
    return out;
}

void gemm(i64 M, i64 N, i64 K, const float* A, i64 lda, const BMatrix& B, float* C, i64 ldc, const Epilogue& e,
          ThreadPool* pool) {
    if (M <= 0 || N <= 0) return;
    if (K <= 0) {
        epilogue_only(M, 0, N, C, ldc, e);
        return;
    }
    if (M == 1 && B.packed && (B.panel_k == 0 || B.panel_k == K)) {  // one row: the matrix-vector kernel (gemv.cpp)
        gemv_packed(N, K, A, B.data, C, e, pool);
        return;
    }
    Job j = make_job(M, N, K, B, C, ldc, e);
    j.a = A, j.lda = lda;
    add_even_blocks(j, 0, K);
    run_job(j, pool);
}

void gemm(i64 M, i64 N, i64 K, const SplitA& A, const BMatrix& B, float* C, i64 ldc, const Epilogue& e,
          ThreadPool* pool) {
    if (M <= 0 || N <= 0) return;
    if (K <= 0) {
        epilogue_only(M, 0, N, C, ldc, e);
        return;
    }
    Job j = make_job(M, N, K, B, C, ldc, e);
    j.a = A.a1, j.lda = A.lda1;
    j.a2 = A.a2, j.lda2 = A.lda2, j.k1 = std::clamp<i64>(A.k1, 0, K);
    // Segments as long as both parts' widths allow: [x_t | h] of 64 and 128 is three segments of
    // 64 in one block, as deep as the gathered rows' block. Widths sharing less than 16 run each
    // part in blocks of its own (C is stored and reloaded between them).
    const i64 kb = k_block(*j.ik), len = std::gcd(j.k1, K - j.k1);
    if (len >= 16 && len <= kb) {
        const i64 nseg = K / len, per = std::min<i64>(kMaxSeg, kb / len);
        const i64 each = ceil_div(nseg, ceil_div(nseg, per));
        for (i64 s = 0; s < nseg; s += each) j.blocks.push_back({s * len, std::min(each, nseg - s), len, 0, 0});
    } else {
        add_even_blocks(j, 0, j.k1);
        add_even_blocks(j, j.k1, K);
    }
    run_job(j, pool);
}

void conv2d(const Conv2DParams& p, const float* x, const BMatrix& w, float* y, const Epilogue& e,
            ThreadPool* pool) {
    const i64 M = p.n * p.oh * p.ow, N = p.cout, taps = p.kh * p.kw, K = taps * p.cin;
    if (M <= 0 || N <= 0) return;
    if (K <= 0) {
        epilogue_only(M, 0, N, y, N, e);
        return;
    }
    Job j = make_job(M, N, K, w, y, N, e);
    j.a = x, j.lda = 0;
    j.conv = &p;
    if (p.kh == 1 && p.kw == 1 && p.stride_h == 1 && p.stride_w == 1 && p.pad_top == 0 && p.pad_left == 0 &&
        p.oh == p.h && p.ow == p.w) {
        gemm(M, N, K, x, p.cin, w, y, N, e, pool);  // a plain matrix product
        return;
    }
    // Deeper k blocks (k_block) made no difference measurable here (ResNet-18, MobileNet v2,
    // smallcnn at batch 1), so convolutions keep blocks of 256.
    const i64 kc = kKcMin;
    if (p.cin < 16 && K <= kIm2colMaxK) {
        j.im2col = true;
        // A stem (Cin 3, stride 2): a kernel row's taps are consecutive in the input, so interior
        // pixels need no copy (torch's MobileNet v2 stem at batch 1: 0.60 -> 0.43 ms).
        j.row_segments = p.dil_w == 1 && p.kh <= kMaxSeg && p.kw * p.cin <= kc;
        if (j.row_segments) j.blocks.push_back({0, p.kh, p.kw * p.cin, 0, 0});
        else j.blocks.push_back({0, 1, K, 0, 0});
    } else {
        const i64 chunks = ceil_div(p.cin, kc);
        if (chunks == 1) {
            const i64 group = std::min<i64>(kMaxSeg, std::max<i64>(1, kc / p.cin));
            for (i64 t = 0; t < taps; t += group) {
                const i64 nt = std::min(group, taps - t);
                j.blocks.push_back({t * p.cin, nt, p.cin, t, 0});
            }
        } else {
            const i64 clen = ceil_div(p.cin, chunks);
            for (i64 t = 0; t < taps; ++t)
                for (i64 c0 = 0; c0 < p.cin; c0 += clen)
                    j.blocks.push_back({t * p.cin + c0, 1, std::min(clen, p.cin - c0), t, c0});
        }
    }
    run_job(j, pool);
}

}  // namespace graft::cpu::gemm
