// The Activation family: y = f(x) elementwise, f one of graft_rt's activations (graft_rt/act.hpp,
// the one table) chosen by the attribute `activation` with its parameters alpha, max_value and
// threshold. The same attributes make the fused epilogue of Linear and the convolutions.
#pragma once

#include "graft/registry.hpp"
#include "graft_rt/act.hpp"

namespace graft::ops {

/// The op's activation: attribute `activation` with its parameters (ops::act_params);
/// UnsupportedError for a name outside the table.
graft_rt::ActParams activation_of(const Operator& op);

}  // namespace graft::ops
