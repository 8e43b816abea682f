// The op families graft ships: every one registers its schemas and its generators (kernel
// builders for the native backend, emitters for the cpp backend) in one call. This file is the
// one list of them (lib/ops/families.cpp).
#pragma once

#include "graft/registry.hpp"

namespace graft::ops {

/// Registers every built-in op family into `r`.
void register_builtin_ops(Registry& r);

void register_pool(Registry& r);    // pool/: Pool2D, Pool3D, GlobalPool
void register_shape(Registry& r);   // shape/: Reshape, Transpose, Concat, Reverse, Pad, DepthToSpace, SpaceToDepth
void register_resize(Registry& r);  // resize/: Resize, Upsample, ResizeBilinear
void register_grid_sample(Registry& r);  // resize/grid_sample.cpp: GridSample
void register_activation(Registry& r);   // ops/activation: Activation
void register_elementwise(Registry& r);  // ops/elementwise: Identity, Merge, Softmax
void register_affine(Registry& r);       // ops/affine: BiasAdd, Affine, BatchNormalization, PReLU
void register_fused(Registry& r);        // ops/fused: FusedElementwise
void register_normalization(Registry& r);  // lib/ops/normalization: LayerNorm, GroupNorm, L2Normalize, LRN
void register_embedding(Registry& r);      // lib/ops/embedding: Embedding, NonZeroMask, Masking
void register_recurrent(Registry& r);      // lib/ops/recurrent: SimpleRNN, LSTM, GRU
void register_conv_lstm(Registry& r);      // lib/ops/recurrent/conv_lstm.cpp: ConvLSTM2D
void register_attention(Registry& r);      // lib/ops/attention: Attention
void register_linear(Registry& r);  // lib/ops/linear: Linear, BatchMatMul
void register_conv(Registry& r);    // lib/ops/conv: Conv1D/2D/3D, DepthwiseConv2D, ConvTranspose2D/3D
void register_local_conv(Registry& r);  // lib/ops/conv/local.cpp: LocallyConnected2D
void register_broadcast(Registry& r);  // lib/ops/broadcast: Binary
void register_integer(Registry& r);   // lib/ops/integer: Cast, Gather, Where, OneHot
void register_reduce(Registry& r);     // lib/ops/reduce: Reduce, ArgMax, ArgMin, Hardmax, Det
void register_along_axis(Registry& r);  // lib/ops/reduce/along_axis.cpp: TopK, CumSum

}  // namespace graft::ops
