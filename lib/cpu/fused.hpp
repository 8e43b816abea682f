// A fused elementwise program (the FusedElementwise op, lib/ops/fused_elementwise.cpp): a short
// list of steps over values that all have the output's element count, evaluated block by block
// (kFusedBlock elements at a time), each step one tight loop over the block. Free of the IR.
//
// Values are numbered: 0 .. inputs-1 are the inputs, inputs + s is the result of step s. An input
// is either read in place (the output's shape) or broadcast: element i of the output reads
// x[(i / inner) % len] (one value per index of some adjacent axes, or one value for all when
// len = inner = 1); a broadcast input is gathered into a block buffer first.
#pragma once

#include <cstdint>
#include <vector>

#include "cpu/kernels.hpp"

namespace graft::cpu {

constexpr std::int64_t kFusedBlock = 512;
/// Block buffers a program may use (gathered broadcasts + intermediate results): 32 KB of stack.
constexpr int kFusedMaxBuffers = 16;
constexpr int kFusedMaxInputs = 64;
constexpr int kFusedMaxSteps = 64;

enum class FusedCode : int {
    add, sub, mul, max, min,
    prelu,  // a < 0 ? b * a : a
    div,    // a / scalar
    act,    // act(a)
};

struct FusedOperand {
    bool broadcast = false;
    std::int64_t len = 1, inner = 1;  // broadcast geometry
    int buffer = -1;                  // block buffer of a broadcast input (set by fused_allocate)
};

struct FusedStep {
    FusedCode code = FusedCode::add;
    int a = 0, b = -1;  // value numbers; b = -1 for unary steps
    ActParams act{};
    float scalar = 1.f;
    int buffer = -1;  // block buffer of the result; -1 for the last step (written to y)
};

struct FusedProgram {
    std::vector<FusedOperand> inputs;
    std::vector<FusedStep> steps;
    int buffers = 0;  // block buffers used (set by fused_allocate)
};

/// Assigns block buffers: one per broadcast input, and to each step but the last a buffer that
/// neither a value still needed nor the step's own operands hold. Returns the number used.
int fused_allocate(FusedProgram& p);

/// Evaluates elements [begin, end) of the program: xs[i] is input i, y the output (y may be the
/// memory of a non-broadcast input: each block reads every input before the last step writes).
/// p must be allocated and use at most kFusedMaxBuffers buffers.
void fused_eval(const FusedProgram& p, const float* const* xs, float* y, std::int64_t begin, std::int64_t end);

}  // namespace graft::cpu
