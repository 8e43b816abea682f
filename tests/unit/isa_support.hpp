// tests/unit/isa_support.hpp - running a kernel test on every instruction set this CPU supports,
// and the names the GEMM-level tests (test_gemm, test_gemv, test_winograd) share.
#pragma once

#include <vector>

#include "cpu/gemm/gemm.hpp"
#include "kernel_ref.hpp"

namespace graft_test {

/// Every ISA the CPU supports (generic, avx2, avx512 as available), leaving the detected one active.
inline std::vector<graft::cpu::gemm::Isa> isas() {
    namespace gg = graft::cpu::gemm;
    std::vector<gg::Isa> out;
    for (gg::Isa i : {gg::Isa::generic, gg::Isa::avx2, gg::Isa::avx512})
        if (gg::set_isa(i)) out.push_back(i);
    gg::set_isa(gg::detected_isa());
    return out;
}

/// Restores the detected ISA when a test that switches ISAs ends (a failed REQUIRE included).
struct IsaGuard {
    ~IsaGuard() { graft::cpu::gemm::set_isa(graft::cpu::gemm::detected_isa()); }
};

}  // namespace graft_test

/// `using namespace gemm_test;` in the GEMM-level tests.
namespace gemm_test {
namespace gg = graft::cpu::gemm;
namespace kern = graft::cpu;
using graft_test::IsaGuard;
using graft_test::isas;
using kernel_ref::act_ref;
using kernel_ref::i64;
using kernel_ref::rand_vec;
}  // namespace gemm_test
