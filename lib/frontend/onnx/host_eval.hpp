// Arithmetic on values known while converting (HostTensors): what shape computations in ONNX
// graphs (Shape -> Gather -> Concat -> Reshape, ...) need, done once, so the graph graft runs
// holds no shape ops.
#pragma once

#include <string>
#include <vector>

#include "frontend/onnx/host_tensor.hpp"

namespace graft::onnx {

/// numpy's broadcast of two shapes; ShapeError naming `what` if they do not broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b, const std::string& what);

/// x OP y (OP as host_binary's) on integers known up to the batch size; FormatError on division
/// by zero or overflow, UnsupportedError naming `what` when the result is not of the SymInt form
/// (N * N, N / 3) or a comparison's outcome depends on N.
SymInt sym_binary(const std::string& op, SymInt x, SymInt y, const std::string& what);

/// The elements of `t` at the flat indices `src`, as a tensor of shape `shape` (`t`'s kind,
/// multiples of the batch size kept).
HostTensor host_take(const HostTensor& t, Shape shape, const std::vector<std::size_t>& src);

/// a OP b with numpy broadcasting; OP one of Add Sub Mul Div Pow Max Min Mod Equal Less Greater
/// And Or (ONNX names). Integers stay integers (Div truncates toward zero, as ONNX's) and may
/// depend on the batch size (sym_binary); a float operand makes the result float.
/// UnsupportedError for another OP.
HostTensor host_binary(const std::string& op, const HostTensor& a, const HostTensor& b, const std::string& what);

/// where(cond, x, y) with numpy broadcasting: x's element where cond is non-zero, else y's.
HostTensor host_where(const HostTensor& cond, const HostTensor& x, const HostTensor& y, const std::string& what);

/// `t`'s values broadcast (numpy, from the right) to `dims`, as float32; ShapeError naming `what`
/// if they do not broadcast to exactly `dims`.
std::vector<float> host_expand(const HostTensor& t, const Shape& dims, const std::string& what);

/// The elements at `index` (row-major) of `t` along `axis`, ONNX Gather's semantics (negative
/// indices count from the end; FormatError naming `what` when out of range).
HostTensor host_gather(const HostTensor& t, const HostTensor& indices, std::size_t axis, const std::string& what);

}  // namespace graft::onnx
