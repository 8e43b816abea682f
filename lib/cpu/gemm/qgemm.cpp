// Int8 matrix products (qgemm.hpp): packing, the portable kernel, the driver.
#include "cpu/gemm/qgemm.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include "cpu/gemm/bkernel.hpp"
#include "cpu/gemm/qkernel.hpp"
#include "cpu/gemm/ukernel.hpp"
#include "cpu/threadpool.hpp"

namespace graft::cpu::gemm {
namespace {

using i64 = std::int64_t;

// ---- the portable kernel: the same arithmetic, plain loops ---------------------------------------

namespace generic {
struct Q {
    struct Acc {
        std::int32_t v[8];
    };
    struct Wv {  // 8 columns x 2 k, widened
        std::int32_t k0[8], k1[8];
    };
    static constexpr int N = 8;
    static Acc zero() { return Acc{}; }
    static Wv load_w(const std::int8_t* p) {
        Wv w;
        for (int j = 0; j < 8; ++j) w.k0[j] = p[2 * j], w.k1[j] = p[2 * j + 1];
        return w;
    }
    /// The pair (k even, k odd) of a row, from the int16s the int32 holds.
    struct Pair {
        std::int32_t k0, k1;
    };
    static Pair bcast(const std::int32_t* p) {
        std::int16_t h[2];
        std::memcpy(h, p, sizeof h);
        return {h[0], h[1]};
    }
    static Acc madd(Acc acc, Pair a, const Wv& w) {
        for (int j = 0; j < 8; ++j) acc.v[j] += a.k0 * w.k0[j] + a.k1 * w.k1[j];
        return acc;
    }
    static void to_float(const Acc& acc, float sa, const float* sw, const float* add, float* dst) {
        for (int j = 0; j < 8; ++j) dst[j] = static_cast<float>(acc.v[j]) * (sa * sw[j]) + (add ? add[j] : 0.f);
    }
};

#include "cpu/gemm/qkernel_impl.inc"

float quantise(const float* x, i64 K, std::int16_t* q) {
    float amax = 0.f;
    bool nan = false;
    for (i64 k = 0; k < K; ++k) {
        const float v = std::fabs(x[k]);
        amax = v > amax ? v : amax;
        nan = nan || std::isnan(v);
    }
    if (nan) amax = std::nanf("");
    if (!(amax >= 1e-30f && amax <= 3.4e38f)) {  // (nearly) zeros, or not finite: all q 0 (see qgemm_avx2.cpp)
        std::memset(q, 0, static_cast<std::size_t>(K + K % 2) * sizeof(std::int16_t));
        return amax / 127.f;
    }
    const float inv = 127.f / amax;
    for (i64 k = 0; k < K; ++k) q[k] = static_cast<std::int16_t>(std::nearbyint(x[k] * inv));
    if (K % 2) q[K] = 0;
    return amax / 127.f;
}
/// The quad kernel: u8 rows (q + zero point) by s8 weights, four k per step, as vpdpbusd.
template <int R, int P>
void qtile_quads(const QTile& t) {
    std::int32_t acc[R][P * 16] = {};
    for (i64 k = 0; k < t.K2; ++k)
        for (int r = 0; r < R; ++r) {
            std::uint8_t a[4];
            std::memcpy(a, t.a + r * t.lda + k, 4);
            for (int p = 0; p < P; ++p)
                for (int j = 0; j < 16; ++j) {
                    const std::int8_t* w = t.b + p * t.bps + k * 64 + j * 4;
                    acc[r][p * 16 + j] += a[0] * w[0] + a[1] * w[1] + a[2] * w[2] + a[3] * w[3];
                }
        }
    for (int r = 0; r < R; ++r) {
        float* c = t.c + r * t.ldc;
        const float* add = t.accumulate ? c : t.init;
        for (int j = 0; j < t.cols; ++j)
            c[j] = static_cast<float>(acc[r][j] - t.za[r] * t.csum[j]) * (t.sa[r] * t.sw[j]) + (add ? add[j] : 0.f);
    }
}

template <int... R>
QKernels make_quads(std::integer_sequence<int, 0, R...>) {
    return QKernels{{nullptr, &qtile_quads<R, 1>...}, {nullptr, &qtile_quads<R, 1>...}, 1, 4, &qtile_quads<1, 4>, &quantise};
}

}  // namespace generic

i64 ceil_div(i64 a, i64 b) { return (a + b - 1) / b; }
i64 round16(i64 n) { return ceil_div(n, kPanel) * kPanel; }

/// Quads (u8 x s8, vpdpbusd) where the AVX-512 VNNI kernels run and the int32 sums stay exact.
bool use_quads(i64 K) { return K <= kQMaxKQuads && qkernels_avx512_vnni_quads() && active_isa() == Isa::avx512; }

const QKernels& quad_kernels() {
    const QKernels* vnni = qkernels_avx512_vnni_quads();
    return vnni && active_isa() == Isa::avx512 ? *vnni : qkernels_generic_quads();
}

const QKernels& kernels() {
    const Isa isa = active_isa();
    const QKernels *avx2 = qkernels_avx2(), *vnni = qkernels_avx512_vnni();
    if (isa == Isa::avx512 && vnni) return *vnni;
    return isa != Isa::generic && avx2 ? *avx2 : qkernels_generic();
}

// Tasks smaller than this many multiply-adds stay on the calling thread.
constexpr i64 kParallelMin = 1 << 16;

// The block's header: which precision, K and N, padded to 64 bytes (16 floats).
constexpr i64 kHeader = 16;
constexpr std::uint32_t kTagInt8 = 0x38544e49u, kTagQuads = 0x34513849u, kTagBf16 = 0x36314642u;  // "INT8", "I8Q4", "BF16"
struct Header {
    std::uint32_t tag;
    std::uint32_t pad;
    i64 K, N;
};
static_assert(sizeof(Header) <= kHeader * sizeof(float));

}  // namespace

const QKernels& qkernels_generic() {
    static const QKernels k = generic::make_qkernels(&generic::quantise);
    return k;
}

const QKernels& qkernels_generic_quads() {
    static const QKernels k = generic::make_quads(std::make_integer_sequence<int, kQRows + 1>{});
    return k;
}

std::size_t qpacked_floats(i64 K, i64 N, Precision kind) {
    if (kind == Precision::bf16) return static_cast<std::size_t>(kHeader + bpacked_pairs(K, N));
    if (use_quads(K))  // scales, column sums, [K4][16][4] panels
        return static_cast<std::size_t>(kHeader + 2 * round16(N) + ceil_div(K, 4) * round16(N));
    const i64 bytes = ceil_div(K, 2) * 2 * round16(N);
    return static_cast<std::size_t>(kHeader + round16(N) + ceil_div(bytes, 4));
}

std::vector<float> qpack(const float* w, i64 ldw, i64 K, i64 N, Precision kind) {
    if (kind != Precision::int8 && kind != Precision::bf16)
        throw std::logic_error("qpack: the precision is int8 or bf16, not " + std::string(precision_name(kind)));
    std::vector<float> out(qpacked_floats(K, N, kind), 0.f);
    const bool quads = kind == Precision::int8 && use_quads(K);
    const Header h{kind == Precision::bf16 ? kTagBf16 : quads ? kTagQuads : kTagInt8, 0, K, N};
    std::memcpy(out.data(), &h, sizeof h);
    if (kind == Precision::bf16) {
        bpack(w, ldw, K, N, reinterpret_cast<BPair*>(out.data() + kHeader));
        return out;
    }
    float* scale = out.data() + kHeader;
    auto* csum = reinterpret_cast<std::int32_t*>(scale + round16(N));
    auto* q = reinterpret_cast<std::int8_t*>(scale + (quads ? 2 : 1) * round16(N));
    const i64 kstep = quads ? 4 : 2, steps = ceil_div(K, kstep), step_bytes = 16 * kstep;
    for (i64 n = 0; n < N; ++n) {
        float amax = 0.f;
        bool nan = false;
        for (i64 k = 0; k < K; ++k) {
            const float v = std::fabs(w[k * ldw + n]);
            amax = v > amax ? v : amax;
            nan = nan || std::isnan(v);
        }
        // A column with a NaN or an infinite weight gets scale NaN and every q 0: its outputs are
        // NaN, as fp32's would be. One of zeros, or below 1e-30 (where 127 / amax could overflow),
        // keeps every q 0 too: its outputs are the bias, and a product that small is lost.
        const bool finite = !nan && std::isfinite(amax);
        scale[n] = finite ? amax / 127.f : std::nanf("");
        if (!finite || !(amax >= 1e-30f)) continue;
        const float inv = 127.f / amax;
        std::int8_t* panel = q + (n / kPanel) * steps * step_bytes + (n % kPanel) * kstep;
        std::int32_t sum = 0;
        for (i64 k = 0; k < K; ++k) {
            const auto v = static_cast<std::int8_t>(std::nearbyint(w[k * ldw + n] * inv));
            panel[(k / kstep) * step_bytes + k % kstep] = v;
            sum += v;
        }
        if (quads) csum[n] = sum;  // times a row's zero point: what the zero point adds to its sums
    }
    return out;
}

const float* qpack_shared(native::BuildContext& b, const ConstantVariable& w, i64 K, i64 N, Precision kind) {
    const std::string tag =
        std::string("qpack ") + precision_name(kind) + " " + std::to_string(N) + "x" + std::to_string(K);
    return b.keep_shared(w, tag, [&] { return qpack(w.data().data(), N, K, N, kind); });
}

QMatrix qview(const float* block, i64 K, i64 N) {
    Header h;
    std::memcpy(&h, block, sizeof h);
    if ((h.tag != kTagInt8 && h.tag != kTagQuads && h.tag != kTagBf16) || h.K != K || h.N != N)
        throw std::logic_error("qview: the block was not packed by qpack for a " + std::to_string(K) + " x " +
                               std::to_string(N) + " matrix");
    QMatrix m;
    m.K = K, m.N = N;
    if (h.tag == kTagBf16) {
        m.kind = Precision::bf16;
        m.pairs = reinterpret_cast<const BPair*>(block + kHeader);
        return m;
    }
    m.scale = block + kHeader;
    m.data = reinterpret_cast<const std::int8_t*>(block + kHeader + round16(N));
    if (h.tag == kTagQuads) {
        m.csum = reinterpret_cast<const std::int32_t*>(block + kHeader + round16(N));
        m.data = reinterpret_cast<const std::int8_t*>(block + kHeader + 2 * round16(N));
    }
    return m;
}

std::size_t qgemm_work_floats(i64 M, i64 K) { return static_cast<std::size_t>(M * (ceil_div(K, 2) + 2)); }

void qgemm(i64 M, i64 N, i64 K, const float* A, i64 lda, const QMatrix& B, float* C, i64 ldc, const Epilogue& e,
           float* work, ThreadPool* pool) {
    if (M <= 0 || N <= 0) return;
    if (B.kind == Precision::bf16) {
        bgemm(M, N, K, A, lda, B.pairs, C, ldc, e, reinterpret_cast<BPair*>(work), pool);
        return;
    }
    if (K <= 0) {
        epilogue_only(M, 0, N, C, ldc, e);
        return;
    }
    const QKernels& qk = B.csum ? quad_kernels() : kernels();
    const i64 K2 = ceil_div(K, 2), steps = ceil_div(K, qk.kstep), step_bytes = 16 * qk.kstep;
    auto* qa = reinterpret_cast<std::int32_t*>(work);
    float* sa = work + M * K2;
    auto* za = reinterpret_cast<std::int32_t*>(sa + M);  // quads: the rows' zero points
    for (i64 m = 0; m < M; ++m) {
        auto* row = reinterpret_cast<std::int16_t*>(qa + m * K2);
        if (qk.quantise_u8) {
            sa[m] = qk.quantise_u8(A + m * lda, K, reinterpret_cast<std::uint8_t*>(row), za + m);
            continue;
        }
        sa[m] = qk.quantise(A + m * lda, K, row);
        za[m] = 128;
        if (qk.kstep == 4) {  // to u8 (q + 128) in place: byte k is written after int16 k is read
            auto* u8 = reinterpret_cast<std::uint8_t*>(row);
            for (i64 k = 0; k < K; ++k) u8[k] = static_cast<std::uint8_t>(row[k] + 128);
            for (i64 k = K; k < 4 * steps; ++k) u8[k] = 128;  // the pad: zero weights
        }
    }

    const i64 panels = ceil_div(N, kPanel);
    const bool prefetch = steps * step_bytes * panels > (i64{1} << 19);
    // The kernels clamp as they store where they can and no residual comes first; any other
    // activation runs on the stored rows.
    const ClampForm cf = clamp_form(e.act);
    const bool fused = qk.clamps && !e.residual && !cf.other;
    const bool act = e.act && e.act->kind != Act::linear && !fused;
    auto tile = [&](i64 m0, int rows, i64 p, int np, QTileFn fn) {
        QTile t;
        t.a = qa + m0 * K2;
        t.lda = K2;
        t.sa = sa + m0;
        t.b = B.data + p * steps * step_bytes;
        t.bps = steps * step_bytes;
        t.K2 = steps;
        t.csum = B.csum ? B.csum + p * kPanel : nullptr;
        t.za = za + m0;
        t.sw = B.scale + p * kPanel;
        t.c = C + m0 * ldc + p * kPanel;
        t.ldc = ldc;
        t.cols = static_cast<int>(std::min<i64>(np * kPanel, N - p * kPanel));
        t.init = e.accumulate || !e.bias ? nullptr : e.bias + p * kPanel;
        t.accumulate = e.accumulate;
        t.prefetch = prefetch;
        if (fused) t.relu = cf.relu, t.clamp = cf.clamp, t.lo = cf.lo, t.hi = cf.hi;
        fn(t);
        if (e.residual || act)
            for (int r = 0; r < rows; ++r) {
                float* c = t.c + r * ldc;
                if (e.residual) {
                    const float* res = e.residual + (m0 + r) * e.ldr + p * kPanel;
                    for (int j = 0; j < t.cols; ++j) c[j] += res[j];
                }
                if (act) activate(c, c, t.cols, *e.act);
            }
    };
    // Rows [m0, m1) of panels [p0, p1): tiles of qk.mr rows by qk.panels panels (the last ones
    // one panel at a time), every row tile of a panel group while its B is in cache.
    auto run_tiles = [&](i64 p0, i64 p1, i64 m0, i64 m1) {
        for (i64 p = p0; p < p1;) {
            const int np = p + qk.panels <= p1 ? qk.panels : 1;
            for (i64 m = m0; m < m1; m += qk.mr) {
                const int rows = static_cast<int>(std::min<i64>(qk.mr, m1 - m));
                tile(m, rows, p, np, np == qk.panels ? qk.rows[rows] : qk.narrow[rows]);
            }
            p += np;
        }
    };
    // Panels [p0, p1) for all rows: a single row four panels at a time.
    auto run_panels = [&](i64 p0, i64 p1) {
        if (M == 1) {
            i64 p = p0;
            for (; p + 4 <= p1; p += 4) tile(0, 1, p, 4, qk.wide);
            for (; p < p1; ++p) tile(0, 1, p, 1, qk.narrow[1]);
            return;
        }
        run_tiles(p0, p1, 0, M);
    };
    const int T = pool_size(pool);
    if (T <= 1 || M * N * K < kParallelMin) {
        run_panels(0, panels);
        return;
    }
    if (panels >= 2 * T || M <= qk.mr) {  // split the columns (in groups of 4 panels for one row)
        const i64 unit = M == 1 ? 4 : qk.panels, units = ceil_div(panels, unit), chunk = ceil_div(units, T) * unit;
        parallel_for(pool, ceil_div(panels, chunk),
                     [&](i64 i) { run_panels(i * chunk, std::min(panels, (i + 1) * chunk)); });
        return;
    }
    // Few panels, many rows: split the rows.
    const i64 blocks = ceil_div(M, qk.mr), chunk = ceil_div(blocks, T) * qk.mr;
    parallel_for(pool, ceil_div(M, chunk), [&](i64 i) { run_tiles(0, panels, i * chunk, std::min(M, (i + 1) * chunk)); });
}

bool qgemm_fast(Precision kind) {
    if (kind == Precision::bf16) return bkernels_avx512() != nullptr && active_isa() == Isa::avx512;
    return kind == Precision::int8 && qkernels_avx2() != nullptr && active_isa() != Isa::generic;
}

}  // namespace graft::cpu::gemm
