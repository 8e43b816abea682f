// The native evaluation of a fused elementwise program (graft_rt/fused.hpp describes the program
// and holds its reference evaluation): the same steps, vectorized for the CPU's instruction set.
#pragma once

#include <cstdint>

#include "graft_rt/fused.hpp"

namespace graft::cpu {

using graft_rt::FusedCode;
using graft_rt::FusedOperand;
using graft_rt::FusedProgram;
using graft_rt::FusedStep;
using graft_rt::kFusedBlock;
using graft_rt::kFusedMaxBuffers;
using graft_rt::kFusedMaxInputs;
using graft_rt::kFusedMaxSteps;

/// Evaluates elements [begin, end) of the program: xs[i] is input i, y the output (y may be the
/// memory of a non-broadcast input: each block reads every input before the last step writes).
/// p must be allocated (graft_rt::fused_allocate) and use at most kFusedMaxBuffers buffers.
void fused_eval(const FusedProgram& p, const float* const* xs, float* y, std::int64_t begin, std::int64_t end);

}  // namespace graft::cpu
