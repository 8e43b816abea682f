// The op types graft ships, by family (lib/ops/<family>/): the names the frontends' converters
// write into graphs and the optimizer's passes look for. They are one list so that code which only
// names ops includes this header alone, not a family's typed attributes and kernel headers; each
// family's header (lib/ops/<family>/<family>.hpp) says what its ops take and compute.
#pragma once

namespace graft::ops {

// linear/
inline constexpr const char* kLinear = "Linear";
inline constexpr const char* kBatchMatMul = "BatchMatMul";

// conv/
inline constexpr const char* kConv1D = "Conv1D";
inline constexpr const char* kConv2D = "Conv2D";
inline constexpr const char* kConv3D = "Conv3D";
inline constexpr const char* kDepthwiseConv2D = "DepthwiseConv2D";
inline constexpr const char* kConvTranspose2D = "ConvTranspose2D";
inline constexpr const char* kConvTranspose3D = "ConvTranspose3D";
inline constexpr const char* kLocallyConnected2D = "LocallyConnected2D";

// pool/
inline constexpr const char* kPool2D = "Pool2D";
inline constexpr const char* kPool3D = "Pool3D";
inline constexpr const char* kPoolArgMax = "PoolArgMax";
inline constexpr const char* kGlobalPool = "GlobalPool";

// activation/
inline constexpr const char* kActivation = "Activation";

// elementwise/
inline constexpr const char* kIdentity = "Identity";
inline constexpr const char* kMerge = "Merge";
inline constexpr const char* kSoftmax = "Softmax";

// affine/
inline constexpr const char* kBiasAdd = "BiasAdd";
inline constexpr const char* kAffine = "Affine";
inline constexpr const char* kBatchNormalization = "BatchNormalization";
inline constexpr const char* kPReLU = "PReLU";

// normalization/
inline constexpr const char* kLayerNorm = "LayerNorm";
inline constexpr const char* kGroupNorm = "GroupNorm";
inline constexpr const char* kL2Normalize = "L2Normalize";
inline constexpr const char* kLRN = "LRN";

// shape/
inline constexpr const char* kReshape = "Reshape";
inline constexpr const char* kTranspose = "Transpose";
inline constexpr const char* kConcat = "Concat";
inline constexpr const char* kReverse = "Reverse";
inline constexpr const char* kPad = "Pad";
inline constexpr const char* kDepthToSpace = "DepthToSpace";
inline constexpr const char* kSpaceToDepth = "SpaceToDepth";

// recurrent/
inline constexpr const char* kSimpleRNN = "SimpleRNN";
inline constexpr const char* kLSTM = "LSTM";
inline constexpr const char* kGRU = "GRU";
inline constexpr const char* kConvLSTM2D = "ConvLSTM2D";

// embedding/
inline constexpr const char* kEmbedding = "Embedding";
inline constexpr const char* kNonZeroMask = "NonZeroMask";
inline constexpr const char* kMasking = "Masking";

// integer/: values of other dtypes
inline constexpr const char* kCast = "Cast";
inline constexpr const char* kGather = "Gather";
inline constexpr const char* kWhere = "Where";
inline constexpr const char* kOneHot = "OneHot";

// attention/
inline constexpr const char* kAttention = "Attention";

// resize/
inline constexpr const char* kResize = "Resize";
inline constexpr const char* kUpsample = "Upsample";
inline constexpr const char* kResizeBilinear = "ResizeBilinear";
inline constexpr const char* kGridSample = "GridSample";

// fused/ (made by the optimizer's fuse_elementwise, never by a converter)
inline constexpr const char* kFusedElementwise = "FusedElementwise";

// broadcast/
inline constexpr const char* kBinary = "Binary";
inline constexpr const char* kExpand = "Expand";

// reduce/
inline constexpr const char* kReduce = "Reduce";
inline constexpr const char* kArgMax = "ArgMax";
inline constexpr const char* kArgMin = "ArgMin";
inline constexpr const char* kHardmax = "Hardmax";
inline constexpr const char* kDet = "Det";
inline constexpr const char* kTopK = "TopK";      // reduce/along_axis.cpp
inline constexpr const char* kCumSum = "CumSum";  // reduce/along_axis.cpp

}  // namespace graft::ops
