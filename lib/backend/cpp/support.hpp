// The cpp backend's support sections: fixed C++ kernels emitted once per model (inside namespace
// graft_rt of the generated source) when an op uses them, and helpers the built-in emitters share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graft/backend/cpp.hpp"
#include "graft/backend/cpp_emit.hpp"
#include "ops/op_util.hpp"

namespace graft::cpp {

/// One support section: a key, the keys it needs first, and its source.
struct Section {
    const char* key;
    std::vector<const char*> deps;
    const char* source;
};

/// Every built-in section (rt_*.cpp).
const std::vector<Section>& sections();
std::vector<Section> math_sections();      // rt_math.cpp: activations, affine, merge, softmax, norms, masks
std::vector<Section> gemm_sections();      // rt_gemm.cpp: gemm, dense, convolutions, batch matmul
std::vector<Section> layout_sections();    // rt_layout.cpp: transpose, concat, pad, resize, pooling
std::vector<Section> sequence_sections();  // rt_sequence.cpp: recurrent layers, attention

/// Asks for built-in section `key` (and what it needs first).
void use(EmitContext& ctx, const std::string& key);

// ---- helpers for the built-in emitters ---------------------------------------------------------

/// `graft_rt::ActParams{graft_rt::Act::relu, 0.f, -1.f, 0.f}` for activation name `fn` with the
/// op's alpha / max_value / threshold attributes; asks for the "act" section.
std::string act_expr(EmitContext& ctx, const std::string& fn);
/// The same for resolved activation parameters.
std::string act_literal(EmitContext& ctx, const cpu::ActParams& p);
/// The op's fused activation (attribute "activation", default linear).
inline std::string fused_act(const Operator& op) { return op.attr_or<std::string>("activation", "linear"); }

/// Floats a packed copy of a K x N matrix takes ([ceil(N/16)][K][16], zero padded).
std::int64_t packed_floats(std::int64_t K, std::int64_t N);
/// Row-major w [K, N] packed into column panels of 16 (the layout graft_rt::gemm streams).
std::vector<float> pack_panels(const std::vector<float>& w, std::int64_t K, std::int64_t N);
/// The weight `name` of the op as packed panels: a generation-time constant when it is one,
/// else packed into scratch on every run (a line in the body). Returns the parameter name.
std::string packed_weight(EmitContext& ctx, const std::string& name, std::int64_t K, std::int64_t N);

/// Writes `constexpr graft_rt::TYPE NAME = {` then one line per row ("values,  // names"), then `};`.
/// Rows are {names, values}, e.g. {"n, h, w, cin", "1, 28, 28, 3"}.
void emit_struct(EmitContext& ctx, const std::string& type, const std::string& name,
                 const std::vector<std::pair<std::string, std::string>>& rows);
/// "1, 28, 28, 3".
std::string csv(const std::vector<std::int64_t>& v);
/// The optional input `name`, or "nullptr".
inline std::string input_or_null(EmitContext& ctx, const std::string& name) {
    return ctx.op().has_input(name) ? ctx.input(name) : std::string("nullptr");
}

/// "[1, 28, 28, 3]".
std::string dims(const Shape& s);

/// Registration of each family's emitters.
void register_linear_emitters(Registry& r);
void register_conv_emitters(Registry& r);
void register_pool_emitters(Registry& r);
void register_elementwise_emitters(Registry& r);
void register_shape_emitters(Registry& r);
void register_norm_emitters(Registry& r);
void register_embedding_emitters(Registry& r);
void register_sequence_emitters(Registry& r);
void register_fused_emitters(Registry& r);  // emit_fused.cpp

}  // namespace graft::cpp
