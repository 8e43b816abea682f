// What the ONNX frontend knows of a value while converting: a HostTensor holds the elements of an
// initializer, a Constant or the result of shape arithmetic; its integers may depend on a dynamic
// batch size (SymInt).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graft/ir/variable.hpp"

namespace graft::onnx {

/// The most dimensions an ONNX tensor may have in graft. ONNX sets no bound; real models stay
/// under 8, and a file's shape tensor of a million ones would otherwise become a million axes.
constexpr std::size_t kMaxRank = 32;

/// The most elements a value computed while converting may have (ConstantOfShape, Range, Expand
/// or Tile of known values): 2^24. Beyond, Expand and Tile become runtime ops; the others are refused.
constexpr std::size_t kMaxKnownElements = std::size_t{1} << 24;

/// UnsupportedError ("WHAT: a tensor of R dimensions; graft takes at most 32") above kMaxRank.
void check_rank(std::size_t rank, const std::string& what);

/// An integer known while converting up to the batch size N, which a model with a dynamic batch
/// fixes only when it runs: value + batch * N, for any N >= 1. Shape arithmetic on a dynamic
/// batch (Shape -> Gather -> Mul -> Concat -> Reshape) computes with these.
struct SymInt {
    std::int64_t value = 0, batch = 0;

    bool fixed() const noexcept { return batch == 0; }
    bool operator==(const SymInt& o) const noexcept { return value == o.value && batch == o.batch; }
    /// "3", "N", "4*N", "2*N+1".
    std::string str() const;
};

/// A tensor's values as graft keeps them while converting: float types (float, double,
/// float16, bfloat16) as float32, integer types and bool as int64.
struct HostTensor {
    enum class Kind { floating, integer, boolean };
    Kind kind = Kind::floating;
    Shape shape;
    std::vector<float> f;         ///< floating
    std::vector<std::int64_t> i;  ///< integer, boolean (0/1)
    /// Integer tensors: per element, its multiple of the batch size (element k is the SymInt
    /// i[k] + batch[k] * N); empty, or all zero, when every element is a plain number.
    std::vector<std::int64_t> batch;

    std::int64_t numel() const { return graft::numel(shape); }
    bool is_float() const noexcept { return kind == Kind::floating; }
    /// Some element depends on the batch size.
    bool symbolic() const noexcept;
    /// Element k of an integer or boolean tensor.
    SymInt sym(std::size_t k) const { return {i[k], batch.empty() ? 0 : batch[k]}; }
    /// Appends element k of `t` (an integer to a floating tensor as a float; UnsupportedError if
    /// it depends on the batch size).
    void push(const HostTensor& t, std::size_t k);
    /// Appends `v` to an integer tensor.
    void push(SymInt v);
    /// The values as float32 (integers converted); UnsupportedError if they depend on the batch
    /// size (graft computes with such values only as shapes).
    std::vector<float> floats() const;
    /// The values as int64; FormatError naming `what` for floating values that are not integers,
    /// UnsupportedError naming it if they depend on the batch size.
    std::vector<std::int64_t> ints(const std::string& what) const;
    /// The values as SymInts; FormatError naming `what` for floating values that are not integers.
    std::vector<SymInt> sym_ints(const std::string& what) const;
};

}  // namespace graft::onnx
