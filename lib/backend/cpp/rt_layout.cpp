// Support sections of the generated code: layout and shape kernels (transpose, concatenation,
// reversal, padding, upsampling, bilinear resize) and pooling.
#include "backend/cpp/sections.hpp"
#include "ops/emit_util.hpp"

namespace graft::cpp {

std::vector<Section> layout_sections() {
    std::vector<Section> s;
    s.push_back({"transpose", {"core"}, R"graft(
/// y = x with its axes permuted: y's axis i is x's axis perm[i] (rank <= 8). Visits y in order;
/// the innermost output axis is a strided read of x.
inline void transpose(const float* x, float* y, const i64* in_shape, const int* perm, int rank) {
    i64 xstride[8], dim[8], stride[8];
    i64 total = 1;
    for (int i = rank - 1; i >= 0; --i) {
        xstride[i] = total;
        total *= in_shape[i];
    }
    for (int i = 0; i < rank; ++i) dim[i] = in_shape[perm[i]], stride[i] = xstride[perm[i]];
    if (total == 0) return;
    if (rank == 0) {
        y[0] = x[0];
        return;
    }
    const i64 inner = dim[rank - 1], inner_stride = stride[rank - 1];
    i64 idx[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    i64 xo = 0;
    for (i64 yo = 0; yo < total; yo += inner) {
        for (i64 j = 0; j < inner; ++j) y[yo + j] = x[xo + j * inner_stride];
        for (int k = rank - 2; k >= 0; --k) {  // the next index of the outer axes (an odometer)
            xo += stride[k];
            if (++idx[k] < dim[k]) break;
            xo -= dim[k] * stride[k];
            idx[k] = 0;
        }
    }
}
)graft"});

    s.push_back({"concat", {"core"}, R"graft(
/// Appends the block [outer, len, inner] of x to y [outer, total, inner] at position `at` of the middle axis
/// (nothing to do when the memory plan placed x there already).
inline void concat_part(const float* x, float* y, i64 outer, i64 len, i64 inner, i64 total, i64 at) {
    for (i64 o = 0; o < outer; ++o) {
        float* dst = y + (o * total + at) * inner;
        const float* src = x + o * len * inner;
        if (dst != src) std::memcpy(dst, src, bytes(len * inner));
    }
}
)graft"});

    s.push_back({"reverse", {"core"}, R"graft(
/// y = x with the middle axis of [outer, len, inner] in reverse order.
inline void reverse(const float* x, float* y, i64 outer, i64 len, i64 inner) {
    for (i64 o = 0; o < outer; ++o)
        for (i64 t = 0; t < len; ++t)
            std::memcpy(y + (o * len + (len - 1 - t)) * inner, x + (o * len + t) * inner, bytes(inner));
}
)graft"});

    s.push_back({"pad", {"core"}, R"graft(
/// y = x shifted by begin[i] along axis i (negative: cropped), zeros where nothing maps; both
/// row-major with the same rank (<= 8).
inline void pad_nd(const float* x, float* y, const i64* in_shape, const i64* out_shape, const i64* begin, int rank,
                   int axis = 0) {
    i64 in_stride = 1, out_stride = 1;
    for (int i = axis + 1; i < rank; ++i) in_stride *= in_shape[i], out_stride *= out_shape[i];
    const i64 in = in_shape[axis], out = out_shape[axis], b = begin[axis];
    const i64 lo = std::min(std::max<i64>(b, 0), out), hi = std::min(std::max(b + in, lo), out);  // o - b in [0, in)
    std::memset(y, 0, bytes(lo * out_stride));
    for (i64 o = lo; o < hi; ++o) {
        if (axis == rank - 1) y[o] = x[o - b];
        else pad_nd(x + (o - b) * in_stride, y + o * out_stride, in_shape, out_shape, begin, rank, axis + 1);
    }
    std::memset(y + hi * out_stride, 0, bytes((out - hi) * out_stride));
}
)graft"});

    s.push_back({"upsample", {"core"}, R"graft(
/// Nearest-neighbour upsampling by integer factors: y[j] = x[j / factor] along every axis.
inline void upsample_nearest(const float* x, float* y, const i64* in_shape, const i64* factors, int rank, int axis = 0) {
    i64 in_stride = 1, out_stride = 1;
    for (int i = axis + 1; i < rank; ++i) in_stride *= in_shape[i], out_stride *= in_shape[i] * factors[i];
    for (i64 i = 0; i < in_shape[axis]; ++i) {
        float* first = y + i * factors[axis] * out_stride;
        if (axis == rank - 1) first[0] = x[i];
        else upsample_nearest(x + i * in_stride, first, in_shape, factors, rank, axis + 1);
        for (i64 r = 1; r < factors[axis]; ++r) std::memcpy(first + r * out_stride, first, bytes(out_stride));
    }
}
)graft"});

    s.push_back({"resize_bilinear", {"core"}, R"graft(
struct Lerp {
    i64 lo, hi;
    float t;
};
/// Source position of output `dst` (TF rules): dst * in/out, or with half_pixel (dst + 0.5) * in/out - 0.5.
inline Lerp lerp_of(i64 dst, i64 in, i64 out, bool half_pixel) {
    const float scale = static_cast<float>(in) / static_cast<float>(out);
    const float src = half_pixel ? (static_cast<float>(dst) + 0.5f) * scale - 0.5f : static_cast<float>(dst) * scale;
    const float f = std::floor(src);
    Lerp l;
    l.lo = std::min(std::max<i64>(static_cast<i64>(f), 0), in - 1);
    l.hi = std::max<i64>(std::min<i64>(static_cast<i64>(std::ceil(src)), in - 1), 0);
    l.t = src - f;
    return l;
}

/// Bilinear resize of NHWC images [N, H, W, C] to [N, OH, OW, C].
inline void resize_bilinear_nhwc(const float* x, float* y, i64 n, i64 h, i64 w, i64 c, i64 oh, i64 ow, bool half_pixel) {
    for (i64 b = 0; b < n; ++b) {
        const float* xb = x + b * h * w * c;
        for (i64 i = 0; i < oh; ++i) {
            const Lerp ly = lerp_of(i, h, oh, half_pixel);
            for (i64 j = 0; j < ow; ++j) {
                const Lerp lx = lerp_of(j, w, ow, half_pixel);
                const float* tl = xb + (ly.lo * w + lx.lo) * c;
                const float* tr = xb + (ly.lo * w + lx.hi) * c;
                const float* bl = xb + (ly.hi * w + lx.lo) * c;
                const float* br = xb + (ly.hi * w + lx.hi) * c;
                float* yp = y + ((b * oh + i) * ow + j) * c;
                for (i64 k = 0; k < c; ++k) {
                    const float top = tl[k] + (tr[k] - tl[k]) * lx.t;
                    const float bottom = bl[k] + (br[k] - bl[k]) * lx.t;
                    yp[k] = top + (bottom - top) * ly.t;
                }
            }
        }
    }
}
)graft"});

    return s;
}

}  // namespace graft::cpp
