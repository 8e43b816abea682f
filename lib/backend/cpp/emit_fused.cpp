// C++ emitter: FusedElementwise (ops/fused_elementwise.hpp). The program becomes straight code:
// a loop over blocks (kern::kFusedBlock elements), broadcast inputs gathered into block buffers,
// then one loop per step - the same evaluation order and block buffers as the native kernel.
#include "ops/emit_util.hpp"
#include "ops/legacy_families.hpp"
#include "ops/fused_elementwise.hpp"

namespace graft::cpp {

namespace {

namespace kern = cpu;

const char* const kBroadcastSource = R"graft(
/// dst[j] = x[((start + j) / inner) % len] for j < m: the values of a broadcast input (one per
/// index of some adjacent axes of the output) for one block of a fused elementwise op.
inline void broadcast_block(const float* x, i64 len, i64 inner, i64 start, i64 m, float* dst) {
    i64 c = (start / inner) % len, r = start % inner;
    for (i64 j = 0; j < m; ++j) {
        dst[j] = x[c];
        if (++r == inner) {
            r = 0;
            if (++c == len) c = 0;
        }
    }
}
)graft";

const char* code_name(kern::FusedCode c) {
    switch (c) {
        case kern::FusedCode::add: return "add";
        case kern::FusedCode::sub: return "sub";
        case kern::FusedCode::mul: return "mul";
        case kern::FusedCode::max: return "max";
        case kern::FusedCode::min: return "min";
        case kern::FusedCode::prelu: return "prelu";
        case kern::FusedCode::div: return "div";
        case kern::FusedCode::act: return "act";
    }
    return "?";
}

void emit_fused(EmitContext& ctx) {
    const Operator& op = ctx.op();
    const kern::FusedProgram p = ops::fused::compile(op);
    const auto& ins = op.inputs();
    const int n_in = static_cast<int>(p.inputs.size());
    std::vector<std::string> params;
    for (const auto& [port, v] : ins) params.push_back(ctx.input(port));
    const std::string y = ctx.output("y");
    use(ctx, "core");

    // Each value as a pointer to its block and as its element j.
    auto block = [&](int v) -> std::string {
        if (v < n_in) {
            const auto& in = p.inputs[static_cast<std::size_t>(v)];
            return in.broadcast ? format("buf[{}]", in.buffer) : params[static_cast<std::size_t>(v)] + " + i0";
        }
        const auto& st = p.steps[static_cast<std::size_t>(v - n_in)];
        return st.buffer < 0 ? y + " + i0" : format("buf[{}]", st.buffer);
    };
    auto elem = [&](int v) -> std::string {
        if (v < n_in && !p.inputs[static_cast<std::size_t>(v)].broadcast) return params[static_cast<std::size_t>(v)] + "[i0 + j]";
        if (v >= n_in && p.steps[static_cast<std::size_t>(v - n_in)].buffer < 0) return y + "[i0 + j]";
        return block(v) + "[j]";
    };

    ctx.comment("y may be x0's memory (in place): every block reads its inputs before the last step writes y");
    ctx.constant_i64("n", op.output("y")->numel(), "elements");
    ctx.constant_i64("B", kern::kFusedBlock, "elements per block");
    if (p.buffers > 0) ctx.line("float buf[{}][B];  // block buffers: broadcast inputs, intermediate values", p.buffers);
    ctx.body().block("for (std::int64_t i0 = 0; i0 < n; i0 += B)", [&] {
        ctx.line("const std::int64_t m = n - i0 < B ? n - i0 : B;");
        for (int i = 0; i < n_in; ++i) {
            const auto& in = p.inputs[static_cast<std::size_t>(i)];
            if (!in.broadcast) continue;
            ctx.support("fused_broadcast", kBroadcastSource);
            ctx.line("graft_rt::broadcast_block({}, {}, {}, i0, m, buf[{}]);  // {}: bcast {}", params[static_cast<std::size_t>(i)],
                     in.len, in.inner, in.buffer, ins[static_cast<std::size_t>(i)].first,
                     op.attr<std::vector<std::string>>("bcast").at(static_cast<std::size_t>(i)));
        }
        for (std::size_t s = 0; s < p.steps.size(); ++s) {
            const auto& st = p.steps[s];
            const int out = n_in + static_cast<int>(s);
            const std::string note = format("step {}: {}", s, code_name(st.code));
            if (st.code == kern::FusedCode::act) {
                ctx.line("graft_rt::activation({}, {}, m, {});  // {}", block(st.a), block(out), act_literal(ctx, st.act), note);
                continue;
            }
            const std::string a = elem(st.a), b = st.b >= 0 ? elem(st.b) : std::string();
            std::string e;
            switch (st.code) {
                case kern::FusedCode::add: e = a + " + " + b; break;
                case kern::FusedCode::sub: e = a + " - " + b; break;
                case kern::FusedCode::mul: e = a + " * " + b; break;
                case kern::FusedCode::max: e = b + " > " + a + " ? " + b + " : " + a; break;
                case kern::FusedCode::min: e = b + " < " + a + " ? " + b + " : " + a; break;
                case kern::FusedCode::prelu: e = a + " < 0.f ? " + b + " * " + a + " : " + a; break;
                case kern::FusedCode::div: e = a + " / " + lit(st.scalar); break;
                case kern::FusedCode::act: break;
            }
            ctx.line("for (std::int64_t j = 0; j < m; ++j) {} = {};  // {}", elem(out), e, note);
        }
    });
}

}  // namespace

void register_fused_emitters(Registry& r) { r.add_generator<cpp::Backend>(ops::fused::kType, emit_fused); }

}  // namespace graft::cpp
