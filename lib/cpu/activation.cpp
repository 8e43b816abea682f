// Elementwise activations (Keras semantics), also used as fused epilogues by other kernels:
// sigmoid and tanh vectorized (vmath.cpp, a few ulp), every other one the reference kernel.
#include "cpu/kernels.hpp"
#include "cpu/vmath.hpp"

namespace graft::cpu {

void activate(const float* x, float* y, std::int64_t n, const ActParams& a) {
    switch (a.kind) {
        case Act::linear: graft_rt::copy(x, y, n); return;
        case Act::sigmoid: vmath::sigmoid(x, y, n); return;
        case Act::tanh: vmath::tanh(x, y, n); return;
        default: graft_rt::activation(x, y, n, a); return;
    }
}

}  // namespace graft::cpu
