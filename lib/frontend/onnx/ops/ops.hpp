// Converters for ONNX ops, one file per family, and what they share. Every converter is filed
// under ("onnx", op type) for the default domain; it reads the node through NodeContext.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "frontend/onnx/node_context.hpp"

namespace graft::onnx {

using Handler = void (*)(NodeContext&);

/// Files `h` as the converter of ai.onnx op `op_type`.
void add(Registry& r, const char* op_type, Handler h);

/// An ONNX axis (negative counts from the end) of a tensor of rank `rank`, checked.
std::size_t axis_index(const NodeContext& ctx, std::int64_t axis, std::size_t rank);
/// The same as the named axis of `v`'s logical order.
Axis axis_of(const NodeContext& ctx, const Value& v, std::int64_t axis);

/// Adds op `type` named after the node and returns its output "y" as a Value in `logical`.
Value emit(NodeContext& ctx, const std::string& type, NamedVars inputs, Attributes attrs, const Order& logical,
           const std::string& suffix = "");
/// `x`'s elements viewed with `shape` (row-major, as ONNX's Reshape): an aliasing Reshape. One
/// entry of `shape` may be kDynamic (the batch).
Value reshape(NodeContext& ctx, const Value& x, const Shape& shape, const std::string& suffix = "");
/// `x` with its logical dimensions, positionally, `begin` / `end` entries padded (> 0: graft's Pad
/// `mode` "constant" with `value`, "edge" or "reflect") or cropped (< 0); no op when all are zero.
Value pad_or_crop(NodeContext& ctx, const Value& x, const std::vector<std::int64_t>& begin, const std::vector<std::int64_t>& end,
                  const std::string& suffix = "", const std::string& mode = "constant", float value = 0.f);
/// `x`'s entries [start, end) along its logical axis at position `axis` (pad_or_crop: no op for
/// the whole axis).
Value crop(NodeContext& ctx, const Value& x, std::size_t axis, std::int64_t start, std::int64_t end, const std::string& suffix);
/// `v` (relabeled to `names` positionally) as a variable in memory order `order` (the same axes):
/// itself, or a Transpose. For weights computed when the model runs, which ops take in a fixed
/// layout.
Variable* laid_out(NodeContext& ctx, const Value& v, const Order& names, const Order& order, const std::string& suffix);
/// `x`'s shape in its logical order.
Shape logical_shape(const Value& x);
/// Requires `n_lo` to `n_hi` inputs, the first one present.
void expect_inputs(const NodeContext& ctx, std::size_t n_lo, std::size_t n_hi);
/// The node wants only its first output; UnsupportedError naming the others otherwise.
void expect_one_output(const NodeContext& ctx);

/// a OP b with ONNX's broadcasting (OP an ONNX name: Add, Sub, Mul, Div, Pow, Max, Min, Mod): the
/// operands aligned from the right, graft's Merge when they have one shape, else its Binary op.
Value binary(NodeContext& ctx, const std::string& op, Value a, Value b, const std::string& suffix);
/// A known scalar as a constant value.
Value scalar(NodeContext& ctx, float v, const std::string& name);
/// `x` (of dimensions `xdims`) broadcast as numpy does to `dims` (constants.cpp): graft's Expand,
/// whose entries that are the batch size N follow the model's dynamic batch.
Value expand_to(NodeContext& ctx, const Value& x, const std::vector<SymInt>& xdims, const std::vector<SymInt>& dims);
/// f(x) with graft's Activation op (graft_rt/act.hpp's table).
Value activation(NodeContext& ctx, const Value& x, const std::string& fn, double alpha = 0, double max_value = -1,
                 double threshold = 0, const std::string& suffix = "");

/// ONNX Reshape's target for an input of dimensions `in`: 0 copies the input's dimension (unless
/// allowzero), one -1 is inferred. Entries may depend on the batch size N (shape arithmetic on a
/// dynamic batch); at most one of the result's may, which is kDynamic for graft's Reshape (solved
/// from the element count per batch size). ShapeError / UnsupportedError otherwise (shape.cpp).
Shape reshape_target(NodeContext& ctx, const std::vector<SymInt>& in, std::vector<SymInt> t, bool allowzero);

/// y = x . w (+ bias) over x's last logical axis: graft's Linear, w [K, N] row-major (linear.cpp).
Value linear(NodeContext& ctx, const Value& x, std::vector<float> w, std::int64_t K, std::int64_t N, std::vector<float> bias);

/// graft's BatchMatMul of x3 [B, M, K] and y3 [B, K, N] (logical NCT both) as [B, M, N] (NCT).
Value batch_matmul(NodeContext& ctx, const Value& x3, const Value& y3, const std::string& suffix = "");

/// A reduction (graft's Reduce: kind sum, mean, max, ...) of `x` over ONNX axes (none: all).
Value reduce(NodeContext& ctx, const Value& x, const std::string& kind, const std::vector<std::int64_t>& axes, bool keepdims,
             const std::string& suffix);

void register_activation(Registry& r);     // activation.cpp: Relu, Sigmoid, ..., Softmax, PRelu, Clip
void register_elementwise(Registry& r);    // elementwise.cpp: Add, Sub, Mul, Div, Max, Min, Sum, Mean, Pow
void register_linear(Registry& r);         // linear.cpp: Gemm, MatMul
void register_conv(Registry& r);           // conv.cpp: Conv, ConvTranspose
void register_pool(Registry& r);           // pool.cpp: MaxPool, AveragePool, Global*Pool
void register_shape(Registry& r);          // shape.cpp: Reshape, Flatten, Transpose, Concat, ..., DepthToSpace
void register_constants(Registry& r);      // constants.cpp: Constant, Shape, Gather, Cast, ... on known values
void register_normalization(Registry& r);  // normalization.cpp: BatchNormalization, LayerNormalization, ..., LRN
void register_reduce(Registry& r);         // reduce.cpp: Reduce*, ArgMax, ArgMin
void register_recurrent(Registry& r);      // recurrent.cpp: RNN, GRU, LSTM
void register_resize(Registry& r);         // resize.cpp: Resize, Upsample
void register_axis_ops(Registry& r);       // axis_ops.cpp: TopK, CumSum, OneHot
void register_einsum(Registry& r);         // einsum.cpp: Einsum
void register_fused(Registry& r);          // fused.cpp: graft.fused:PackedSelfAttention (patterns.hpp)

/// Every ONNX converter graft ships.
void register_converters(Registry& r);

}  // namespace graft::onnx
