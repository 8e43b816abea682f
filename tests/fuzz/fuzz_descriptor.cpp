// libFuzzer target: a graft descriptor (graph.json + weights.bin) -> graft::load_graph -> IR.
//
// The input is graph.json, then kSeparator, then weights.bin (no separator: weights.bin is
// empty). The target writes the two files into its scratch directory and loads it the way a host
// does. The seeds (fuzz_make_seeds) are descriptors of the repo's Keras fixtures.
#include <cstdint>
#include <cstring>
#include <string>

#include "fuzz_util.hpp"

namespace {

constexpr char kSeparator[] = "\n--graft-fuzz-weights.bin--\n";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::string dir = [] {
        const std::string d = graft_fuzz::scratch_dir() + "/model.graft";
        std::filesystem::create_directories(d);
        return d;
    }();
    const std::string input(reinterpret_cast<const char*>(data), size);
    const auto cut = input.find(kSeparator);
    const std::size_t json_size = cut == std::string::npos ? size : cut;
    const std::size_t weights_at = cut == std::string::npos ? size : cut + std::strlen(kSeparator);
    graft_fuzz::write_file(dir + "/graph.json", data, json_size);
    graft_fuzz::write_file(dir + "/weights.bin", data + weights_at, size - weights_at);
    graft_fuzz::load_graph_or_error(dir);
    return 0;
}
