// A model with a dynamic batch learns its batch size N only when it runs (graft's kDynamic), but
// its shape arithmetic (Shape -> Gather -> Mul -> Concat -> Reshape) needs the sizes of runtime
// values while converting. DynamicBatch gives them as SymInts (value + batch * N): it copies the
// graph built so far, fixes the batch at a few probe sizes, lets the ops' schemas infer every
// shape, and reads each dimension that varies as an affine function of N (checked at a third
// size). Nothing of it reaches the graph graft runs: a dimension that depends on N is kDynamic
// there and solved per batch size when the model is compiled.
#pragma once

#include <array>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "frontend/onnx/model_proto.hpp"
#include "graft/frontend/layer.hpp"

namespace graft::onnx {

class DynamicBatch {
public:
    DynamicBatch(const Graph& g, const Registry& registry) : g_(g), registry_(registry) {}

    /// The dimensions of `v` in its logical order; UnsupportedError naming `what` when one is not
    /// of the form value + batch * N.
    std::vector<SymInt> dims(const Value& v, const std::string& what);

    /// A model input and its axis whose size is the batch: what an op that makes a
    /// batch-dependent value from constants follows (Expand's `like`). UnsupportedError naming
    /// `what` when no input has a dynamic dimension.
    std::pair<Variable*, Axis> carrier(const std::string& what) const;

private:
    static constexpr std::array<std::int64_t, 3> kProbes{2, 3, 7};
    /// Infers the shapes of every variable of the graph at each probe batch size.
    void probe();

    const Graph& g_;
    const Registry& registry_;
    /// Per variable, its shape (in its own order) at each probe size; absent if it could not be
    /// inferred.
    std::unordered_map<const Variable*, std::array<Shape, kProbes.size()>> probed_;
    std::size_t probed_vars_ = 0;  // the graph's variable count at the last probe
};

}  // namespace graft::onnx
