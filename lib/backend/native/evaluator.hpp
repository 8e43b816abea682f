// The native backend as the optimizer's ConstantEvaluator: an operator whose inputs are all
// constants runs as a one-op Program.
#pragma once

#include <memory>

#include "graft/registry.hpp"

namespace graft::native {

std::shared_ptr<const ConstantEvaluator> constant_evaluator();

}  // namespace graft::native
