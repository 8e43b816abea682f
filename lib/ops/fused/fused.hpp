// FusedElementwise: a tree (or DAG) of elementwise ops fused into one op by the optimizer pass
// fuse_elementwise. Its attributes hold a small expression program, so it serializes as type +
// attributes like any op:
//   bcast   strings, one per input x0, x1, ...: "" the input has y's shape (and order; x0 always,
//           so y may be written over it); "*" one value for every element; "A,B" one value per
//           index of y's adjacent axes A, B (in that order, flattened row-major), e.g. "C" for a
//           BiasAdd bias.
//   steps   strings, one opcode per step: add sub mul max min (binary), prelu (a < 0 ? b * a : a),
//           div (a / params[0]), act (activation fns[s] with params alpha, max_value, threshold).
//   args    ints, two per step: operands a, b (b = -1 for a unary step). Value v < #inputs is
//           input v; v >= #inputs is the result of step v - #inputs (an earlier step).
//   fns     strings, one per step: the activation name of an act step, "" otherwise.
//   params  floats, three per step (see steps; 0 when unused).
// y is the result of the last step; its order and shape are x0's.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "graft/registry.hpp"
#include "graft_rt/fused.hpp"

namespace graft::ops::fused {

struct Step {
    std::string code;
    std::int64_t a = 0, b = -1;
    std::string fn;
    std::array<double, 3> params{0.0, 0.0, 0.0};
};

struct Program {
    std::vector<std::string> bcast;
    std::vector<Step> steps;
};

/// The attributes of a FusedElementwise op running `p`.
Attributes encode(const Program& p);
/// The program a FusedElementwise op's attributes hold; GraphError naming `owner` if they are
/// malformed (wrong counts, unknown opcode, an operand that is not an earlier value),
/// UnsupportedError for an unknown activation.
Program decode(const Attributes& a, const std::string& owner);
inline Program decode(const Operator& op) { return decode(op.attrs(), op.describe()); }
/// An op's ElementwiseProgram (OpSchema::elementwise_program): `p` over `inputs`.
ElementwiseProgram lowering(std::vector<ElementwiseProgram::Input> inputs, const Program& p);

}  // namespace graft::ops::fused
