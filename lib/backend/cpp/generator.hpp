// Internal to the cpp backend: the generator's state between its phases (prepare, emit_ops,
// layout_weights, render).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ops/emit_util.hpp"
#include "graft/backend/cpp.hpp"
#include "graft/optimize/passes.hpp"

namespace graft::cpp {

/// Unique C++ identifiers within one scope.
class Names {
public:
    Names() = default;
    explicit Names(std::set<std::string> reserved) : used_(std::move(reserved)) {}
    /// identifier(wanted), or with a suffix _1, _2, ... when taken.
    std::string take(const std::string& wanted);
    bool has(const std::string& name) const { return used_.count(name) != 0; }

private:
    std::set<std::string> used_;
};

/// One parameter of an op's function.
struct Arg {
    std::string param;
    std::string port;              ///< the op's input / output name (for variables)
    const Variable* var = nullptr;  ///< an input or output variable
    bool out = false;               ///< float* (outputs, scratch) rather than const float*
    bool used = false;              ///< the emitter asked for it
    int extra = -1;                 ///< index of a generation-time constant (EmitContext::constant)
    bool scratch = false;
    std::size_t weight_offset = 0;  ///< extra constants: offset in the weights; scratch: in the scratch (floats)
};

/// One op's function.
struct OpCode {
    const Operator* op = nullptr;
    std::string fn;
    Names names;
    std::vector<Arg> args;
    std::vector<std::vector<float>> extras;
    std::size_t scratch = 0;  ///< floats
    Writer body{1};
};

/// Names the rendered Session uses.
struct Io {
    std::string ns;
    std::vector<std::string> in_params, out_params;  ///< infer()'s parameters, model order
    std::map<const Variable*, std::string> local;     ///< infer()'s pointer per tensor
    std::map<std::pair<const OpCode*, int>, std::string> extra_local;  ///< per (op, extra constant)
    std::size_t arena_floats = 0, scratch_offset = 0;
};

class Generator {
public:
    Generator(const Registry& reg, Options options) : reg_(reg), options_(std::move(options)) {}

    void prepare(Graph graph);
    void emit_ops();
    void layout_weights();
    Sources render() const;  // render.cpp

    void add_support(const std::string& key, const std::string& source, const Operator& op);
    /// Kernel header `key` of lib/rt, after what it needs.
    void use_kernel(const std::string& key, const Operator& op);

private:
    std::string function_text(const OpCode& code) const;
    Io names() const;                                  // render.cpp
    std::string header_text(const Io& io) const;       // render.cpp
    std::string source_text(const Io& io) const;       // render.cpp
    std::string infer_text(const Io& io) const;        // render.cpp
    std::string weights_cpp(const Io& io) const;       // render.cpp

    const Registry& reg_;
    Options options_;
    Graph graph_;
    std::vector<Operator*> order_;
    optimize::MemoryPlan plan_;
    std::vector<std::unique_ptr<OpCode>> codes_;
    std::vector<std::pair<std::string, std::string>> support_;
    std::size_t scratch_floats_ = 0;
    std::vector<float> weights_;
    std::map<const Variable*, std::size_t> const_offset_;
};

/// FNV-1a (64 bits) of a byte range: the weights checksum the generated code verifies.
inline std::uint64_t fnv1a64(const unsigned char* p, std::size_t n) {
    std::uint64_t h = 14695981039346656037ull;
    for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

}  // namespace graft::cpp
