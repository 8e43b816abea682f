// Winograd convolution for 3x3, stride-1, dilation-1 NHWC convolutions with constant weights:
// F(4x4,3x3) (Lavin & Gray, points 0, +-1, +-2, infinity), and F(2x2,3x3) where the image is
// too small for enough 4x4 tiles (ResNet's 7x7 stages at batch 1).
//
// The weights are transformed once (U = G g G^T, in double precision) and packed per transform
// point into the GEMM's 16-column panels. A run takes blocks of output tiles (4x4 or 2x2
// pixels): the input transform (V = B^T d B) writes the block's 36 (16) points x Cin, one product
// [tiles x Cin] . [Cin x Cout] per point runs on the GEMM micro-kernels, and the output
// transform (Y = A^T M A) adds bias, residual and the activation, in that order. Blocks are
// sized for L2 (larger when U is large: it is read once per block) and spread over the thread
// pool (splitting Cout too when there are fewer blocks than threads). When U is read from
// memory, the next point's U is prefetched while one point's products run. Scratch comes from
// the session's arena: one region per thread.
//
// Arithmetic: 36 multiplies per 16 outputs (F(2x2): 16 per 4) instead of 144 (36). Accuracy:
// errors up to ~1e-5 relative to the magnitude of the result (the F(4x4) transforms amplify
// rounding, more so as Cin grows); the project tolerance for Winograd is 1e-4 relative.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cpu/gemm/gemm.hpp"
#include "cpu/kernels.hpp"

namespace graft::cpu::gemm {

class Winograd {
public:
    /// 3x3 kernel, strides 1, dilations 1, and a non-empty problem.
    static bool applicable(const Conv2DParams& p);
    /// The output tile size that beats the implicit GEMM (measured thresholds): 4, 2, or 0 for
    /// none (not applicable, or the environment says GRAFT_WINOGRAD=0; read on each call, i.e.
    /// when kernels are built).
    static int choose(const Conv2DParams& p);
    static bool preferred(const Conv2DParams& p) { return choose(p) != 0; }
    /// U for the Keras HWCN kernel w [3, 3, cin, cout] and output tile size `tile` (4 or 2):
    /// (tile + 2)^2 points, each packed_size(cin, cout) floats (point = row * (tile + 2) + column).
    static std::vector<float> transform_weights(const float* w, std::int64_t cin, std::int64_t cout, int tile = 4);

    /// `u` (from transform_weights with the same tile) must outlive this object. Up to `slots`
    /// threads work at once.
    Winograd(const Conv2DParams& p, int tile, const float* u, int slots);

    /// Scratch the run needs (floats, 64-byte aligned when the workspace is).
    std::size_t workspace_floats() const noexcept;
    /// y = act(conv(x) + bias + residual). e.accumulate is not supported (ignored).
    void run(const float* x, float* y, const Epilogue& e, float* workspace, ThreadPool* pool = nullptr) const;

    const Conv2DParams& params() const noexcept { return p_; }
    int tile() const noexcept { return m_; }
    std::int64_t block_tiles() const noexcept { return nt_max_; }

private:
    struct Block;
    void run_block(const Block& b, const float* x, float* y, const Epilogue& e, float* v, float* m,
                   bool transform) const;

    Conv2DParams p_;
    const float* u_;
    std::vector<float> zeros_;     // cin zeros: the input pixels outside the image
    int m_ = 4, a_ = 6, np_ = 36;  // output tile size, input tile size, transform points
    std::int64_t th_ = 0, tw_ = 0, tiles_ = 0;
    std::int64_t nt_max_ = 0;  // tiles per block
    std::int64_t ng_ = 0;      // output channels per product group (multiple of 16)
    std::int64_t slot_floats_ = 0;
    int slots_ = 1;
};

}  // namespace graft::cpu::gemm
