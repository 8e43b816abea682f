// libFuzzer target: the .npy reader of the graft tool (tools/graft/npy.cpp, over xtensor's
// xnpy), which reads `graft run` / `verify` / `bench` inputs and reference outputs.
//
// The input is the .npy file, written into the target's scratch directory. A file read back is
// written out again with npy_bytes and must read back to the same tensor (the same bytes).
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fuzz_util.hpp"
#include "graft/error.hpp"
#include "npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::string path = graft_fuzz::scratch_dir() + "/input.npy";
    graft_fuzz::write_file(path, data, size);
    graft::Tensor t;
    try {
        t = graft::cli::read_npy(path);
    } catch (const graft::Error&) {
        return 0;  // a typed error naming the file
    }
    const std::string bytes = graft::cli::npy_bytes(t);
    graft_fuzz::write_file(path, reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    const graft::Tensor back = graft::cli::read_npy(path);
    if (back.shape() != t.shape() || back.dtype() != t.dtype() || graft::cli::npy_bytes(back) != bytes)
        std::abort();  // a tensor graft writes must read back the same
    return 0;
}
