// The inverted-residual block of MobileNet v2 and its kin, natively in one kernel:
//
//   x -> Conv2D 1x1 (expand, Cin -> E) -> DepthwiseConv2D (E) -> Conv2D 1x1 (project, E -> Cout) [+ r] -> y
//
// The expand may also be a small spatial convolution that runs as the fp32 implicit GEMM at any
// precision (MobileNet v2's stem, 3x3 / 2 over 3 channels, with its first block's depthwise and
// project).
// Run op by op, the expanded tensor (E = 6 Cin channels: 4.8 MB per image at 112 x 112 x 96) goes
// out to L3 or DRAM and comes back twice. The block kernel runs the three over bands of output
// rows instead: the expand GEMM writes the band's input rows to a scratch buffer that stays in
// L2 (keeping the rows the next band shares), the depthwise kernel reads them there, and the
// project GEMM reads its output from L2 and writes y. Every value is computed by the same kernels
// with the same summation order as unfused, so results are identical; under int8 / bf16 either
// pointwise product runs reduced where it would alone (conv_precision), each row quantised on its
// own as there.
//
// The native backend rewrites its own copy of the graph (fuse_conv_blocks, in Program::compile),
// so the memory plan sees the fused op's true lifetimes and the intermediates take no arena.
// Other backends and descriptors never see the op. GRAFT_FUSE_BLOCKS in the environment: 0 turns
// the fusion off; all fuses every chain that qualifies; rows=R also forces bands of R output rows
// (tests); unset or auto fuses chains whose expanded tensor per image exceeds half the L2.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>

#include "cpu/kernels.hpp"
#include "graft/backend/native_kernel.hpp"
#include "graft/ir/graph.hpp"

namespace graft::ops {

/// The op type the rewrite creates (native backend only; not in any registry).
inline constexpr const char* kConvBlock = "ConvBlock";

/// What a ConvBlock op runs: the three ops' geometry and activations, read before they are removed.
struct ConvBlockPlan {
    graft_rt::Conv2DParams expand, project;
    graft_rt::DepthwiseParams depthwise;
    cpu::ActParams act_expand, act_depthwise, act_project;
    std::int64_t band_rows = 0;  ///< output rows per band
};

/// Replaces each qualifying chain of g by one ConvBlock op (inputs x, we, wd, wp, and be, bd, bp, r
/// when the chain has them; output the project's y) and returns the plans by new op.
std::unordered_map<const Operator*, ConvBlockPlan> fuse_conv_blocks(Graph& g);

/// The kernel of a ConvBlock op (b.op()).
std::unique_ptr<native::Kernel> build_conv_block(native::BuildContext& b, const ConvBlockPlan& plan);

}  // namespace graft::ops
