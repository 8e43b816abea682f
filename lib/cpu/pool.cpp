// 2-D pooling over NHWC (max / average; TF/Keras: average divides by the in-range taps), the
// vectorized twin of graft_rt::pool_ndhwc (which runs 3-D pooling and the generated code).
//
// For each output pixel the channels go in blocks of 16 held in one GCC vector across all the
// window's taps (one store per block), the tail channels one at a time. The function is cloned
// for AVX-512 / AVX2 / baseline and picked at load time (target_clones), so the library needs
// no -march flag.
#include <algorithm>
#include <cstring>

#include "cpu/kernels.hpp"

namespace graft::cpu {

namespace {
using i64 = std::int64_t;
typedef float v16 __attribute__((vector_size(64)));
}  // namespace

// Not under ThreadSanitizer: the clones' ifunc resolver runs while the program is relocated,
// before the TSan runtime is up, and crashes (the `tsan` preset).
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__)) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void pool2d_nhwc(const float* x, float* y, const PoolParams& p, bool is_max) {
    const i64 c = p.c;
    for (i64 n = 0; n < p.n; ++n) {
        const float* xn = x + n * p.h * p.w * c;
        for (i64 oh = 0; oh < p.oh; ++oh) {
            const auto [h0, kh_lo, kh_hi] = graft_rt::window_span(oh, p.stride_h, p.pad_top, p.kh, p.h);
            for (i64 ow = 0; ow < p.ow; ++ow) {
                const auto [w0, kw_lo, kw_hi] = graft_rt::window_span(ow, p.stride_w, p.pad_left, p.kw, p.w);
                float* yp = y + ((n * p.oh + oh) * p.ow + ow) * c;
                if (kh_lo >= kh_hi || kw_lo >= kw_hi) {  // window entirely in padding
                    std::memset(yp, 0, static_cast<std::size_t>(c) * sizeof(float));
                    continue;
                }
                const float* first = xn + ((h0 + kh_lo) * p.w + (w0 + kw_lo)) * c;
                const float count = static_cast<float>((kh_hi - kh_lo) * (kw_hi - kw_lo));
                i64 j = 0;
                for (; j + 16 <= c; j += 16) {
                    v16 acc;
                    __builtin_memcpy(&acc, first + j, sizeof acc);
                    for (i64 kh = kh_lo; kh < kh_hi; ++kh)
                        for (i64 kw = kw_lo; kw < kw_hi; ++kw) {
                            if (kh == kh_lo && kw == kw_lo) continue;
                            v16 v;
                            __builtin_memcpy(&v, xn + ((h0 + kh) * p.w + (w0 + kw)) * c + j, sizeof v);
                            if (is_max)
                                acc = v > acc ? v : acc;  // a NaN already held stays (as the scalar loop)
                            else
                                acc += v;
                        }
                    if (!is_max) acc /= count;
                    __builtin_memcpy(yp + j, &acc, sizeof acc);
                }
                for (; j < c; ++j) {
                    float acc = first[j];
                    for (i64 kh = kh_lo; kh < kh_hi; ++kh)
                        for (i64 kw = kw_lo; kw < kw_hi; ++kw) {
                            if (kh == kh_lo && kw == kw_lo) continue;
                            const float v = xn[((h0 + kh) * p.w + (w0 + kw)) * c + j];
                            if (is_max)
                                acc = v > acc ? v : acc;
                            else
                                acc += v;
                        }
                    yp[j] = is_max ? acc : acc / count;
                }
            }
        }
    }
}

}  // namespace graft::cpu
