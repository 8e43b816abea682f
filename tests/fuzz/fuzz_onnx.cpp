// libFuzzer target: ONNX ModelProto bytes -> graft's ONNX frontend -> IR (graft::load_graph).
//
// The input is the .onnx file. It is written into the target's scratch directory (alone: an
// external-data reference finds nothing beside it) and loaded the way a host does. The seeds
// are the repo's tests/fixtures/onnx models. Protobuf's parser and ONNX's checker run too, but
// the coverage that guides the fuzzer is graft's own (they are not instrumented).
#include <cstdint>
#include <string>

#include "fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::string path = graft_fuzz::scratch_dir() + "/model.onnx";
    graft_fuzz::write_file(path, data, size);
    graft_fuzz::load_graph_or_error(path);
    return 0;
}
