// What the built-in emitters share.
#include "ops/emit_util.hpp"

#include <map>

#include "graft_rt/gemm.hpp"

namespace graft::cpp {

void use(EmitContext& ctx, const std::string& key) { ctx.use(key); }

std::string act_expr(EmitContext& ctx, const std::string& fn) {
    return act_literal(ctx, ops::act_params(ctx.op(), fn));  // UnsupportedError for an unknown name
}

std::string act_literal(EmitContext& ctx, const cpu::ActParams& p) {
    use(ctx, "act");
    return format("graft_rt::ActParams{graft_rt::Act::{}, {}, {}, {}}", graft_rt::act_name(p.kind), p.alpha, p.max_value, p.threshold);
}

std::int64_t packed_floats(std::int64_t K, std::int64_t N) { return graft_rt::packed_floats(K, N); }

std::vector<float> pack_panels(const std::vector<float>& w, std::int64_t K, std::int64_t N) {
    std::vector<float> out(static_cast<std::size_t>(graft_rt::packed_floats(K, N)));
    graft_rt::pack_panels(w.data(), N, K, N, out.data());
    return out;
}

std::string packed_weight(EmitContext& ctx, const std::string& name, std::int64_t K, std::int64_t N) {
    use(ctx, "gemm");
    const Variable& w = *ctx.op().input(name);
    if (w.is_constant())
        return ctx.constant(name + "_packed", pack_panels(static_cast<const ConstantVariable&>(w).data(), K, N));
    const std::string work = ctx.scratch(static_cast<std::size_t>(packed_floats(K, N)));
    ctx.line("graft_rt::pack_panels({}, {}, {}, {}, {});  // the weights are computed: pack them here", ctx.input(name), N, K,
             N, work);
    return work;
}

void emit_struct(EmitContext& ctx, const std::string& type, const std::string& name,
                 const std::vector<std::pair<std::string, std::string>>& rows) {
    ctx.line("constexpr graft_rt::{} {} = {{", type, name);
    for (const auto& [names, values] : rows) ctx.line("    {},  // {}", values, names);
    ctx.line("};");
}

void emit_split(EmitContext& ctx, const ops::Split3& s, const Axis& axis) {
    ctx.constant_i64("outer", s.outer, "axes before " + axis.name());
    ctx.constant_i64("len", s.len, "axis " + axis.name());
    ctx.constant_i64("inner", s.inner, "axes after " + axis.name());
}

std::string csv(const std::vector<std::int64_t>& v) {
    std::string out;
    for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
    return out;
}
}  // namespace graft::cpp
