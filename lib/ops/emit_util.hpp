// What the built-in emitters (the cpp backend's generators in lib/ops/<family>/) share: kernel
// headers by name, activation literals, packed weights, constant structs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graft/backend/cpp_emit.hpp"
#include "ops/op_util.hpp"

namespace graft::cpp {

/// Asks for graft's kernel header `key` (lib/rt/graft_rt/KEY.hpp) and what it needs.
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
/// `constexpr` outer, len and inner: x viewed around `axis` (ops::split_at).
void emit_split(EmitContext& ctx, const ops::Split3& s, const Axis& axis);
/// "1, 28, 28, 3".
std::string csv(const std::vector<std::int64_t>& v);
/// The optional input `name`, or "nullptr".
inline std::string input_or_null(EmitContext& ctx, const std::string& name) {
    return ctx.op().has_input(name) ? ctx.input(name) : std::string("nullptr");
}

/// "[1, 28, 28, 3]".
std::string dims(const Shape& s);

}  // namespace graft::cpp
