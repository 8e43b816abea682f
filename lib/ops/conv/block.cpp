// The fused inverted-residual block (block.hpp): which chains qualify, the graph rewrite, and the
// kernel over bands of output rows.
#include "ops/conv/block.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "cpu/caches.hpp"
#include "cpu/gemm/conv_kernel.hpp"
#include "cpu/gemm/gemm.hpp"
#include "cpu/gemm/qgemm.hpp"
#include "cpu/gemm/winograd.hpp"
#include "cpu/threadpool.hpp"
#include "ops/conv/conv.hpp"
#include "ops/op_types.hpp"
#include "ops/op_util.hpp"

namespace graft::ops {

namespace {

using i64 = std::int64_t;

/// GRAFT_FUSE_BLOCKS: off, auto (the size rule), all, or all with a forced band height.
struct FuseMode {
    bool on = true, all = false;
    i64 rows = 0;  // forced output rows per band, 0: chosen by size
};

FuseMode fuse_mode() {
    FuseMode m;
    const char* v = std::getenv("GRAFT_FUSE_BLOCKS");
    if (!v) return m;
    const std::string s(v);
    if (s == "0")
        m.on = false;
    else if (s == "all")
        m.all = true;
    else if (s.rfind("rows=", 0) == 0) {
        m.all = true;
        m.rows = std::max<i64>(1, std::atol(s.c_str() + 5));
    }
    return m;
}

/// Scratch budget of one band (expanded rows + depthwise output): half the L2.
std::size_t band_budget() { return cpu::cache_bytes(2) / 2; }

/// Input rows [a, b) (clamped to the image) that output rows [o0, o1) of the depthwise read.
struct RowSpan {
    i64 a, b;
};
RowSpan rows_needed(const graft_rt::DepthwiseParams& d, i64 o0, i64 o1) {
    const i64 lo = o0 * d.stride_h - d.pad_top, hi = (o1 - 1) * d.stride_h - d.pad_top + (d.kh - 1) * d.dil_h + 1;
    const i64 a = std::clamp<i64>(lo, 0, d.h), b = std::clamp<i64>(hi, 0, d.h);
    return {a, std::max(a, b)};
}

/// Floats of the scratch buffers of one task for bands of `rows` output rows (each rounded up
/// to 64 bytes): the expanded rows, the band's depthwise output, and the quantised or rounded
/// rows of an int8 / bf16 product (`lowp`: either pointwise convolution runs one).
struct BandFloats {
    i64 ebuf, dbuf, qbuf;
    i64 total() const { return ebuf + dbuf + qbuf; }
};
BandFloats band_floats(const ConvBlockPlan& p, i64 rows, bool lowp) {
    const auto& d = p.depthwise;
    const auto up = [](i64 f) { return (f + 15) / 16 * 16; };
    const i64 in_rows = std::min(d.h, (rows - 1) * d.stride_h + (d.kh - 1) * d.dil_h + 1);
    const i64 q = !lowp ? 0
                        : static_cast<i64>(std::max(cpu::gemm::qgemm_work_floats(in_rows * d.w, p.expand.cin),
                                                    cpu::gemm::qgemm_work_floats(rows * d.ow, d.cin)));
    return {up(in_rows * d.w * d.cin), up(rows * d.ow * d.cin), up(q)};
}

/// The op's weights and bias (when it has one) are constants.
bool constant_weights(const Operator& op) {
    const Variable* b = op.input_or_null("b");
    return op.input("w")->is_constant() && (!b || b->is_constant());
}

/// The single reader of v, when v is not a graph output and exactly one op reads it once.
Operator* only_reader(const Graph& g, const Variable* v) {
    if (g.is_output(v)) return nullptr;
    const auto readers = g.consumers(v);
    if (readers.size() != 1) return nullptr;
    std::size_t uses = 0;
    for (const auto& [n, u] : readers[0]->inputs()) uses += u == v;
    return uses == 1 ? readers[0] : nullptr;
}

/// A spatial expand (MobileNet's stem: 3x3, stride 2, over an image's 3 channels) joins a chain
/// where it runs as the fp32 implicit GEMM at every precision, as it would alone: fewer than 32
/// taps per patch (conv_precision) and no Winograd. Its output rows are computed from the input
/// rows of the same image with the padding moved (run_band). Torch's MobileNet v2 then runs its
/// stem and first block (112 x 112 x 32 between them) through L2 instead of L3: at batch 1 the
/// arena shrinks from 4.05 to 2.32 MB.
bool spatial_expand(const graft_rt::Conv2DParams& e) {
    return cpu::gemm::conv_precision(Precision::int8, e) == Precision::fp32 &&
           cpu::gemm::conv_precision(Precision::bf16, e) == Precision::fp32 && !cpu::gemm::Winograd::preferred(e);
}

struct Chain {
    Operator *expand, *depthwise, *project;
    ConvBlockPlan plan;
};

/// The chain starting at `expand`, if it qualifies.
std::optional<Chain> match(const Graph& g, Operator* expand, const FuseMode& mode) {
    if (expand->type() != kConv2D || expand->has_input("r") || !constant_weights(*expand)) return std::nullopt;
    const ConvAttrs ea = ConvAttrs::parse(*expand);
    if (ea.rank != 2) return std::nullopt;
    Operator* dw = only_reader(g, expand->output("y"));
    if (!dw || dw->type() != kDepthwiseConv2D || dw->input("x") != expand->output("y") || !constant_weights(*dw))
        return std::nullopt;
    Operator* project = only_reader(g, dw->output("y"));
    if (!project || project->type() != kConv2D || project->input("x") != dw->output("y") || !constant_weights(*project))
        return std::nullopt;
    const ConvAttrs da = ConvAttrs::parse(*dw), pa = ConvAttrs::parse(*project);
    if (pa.rank != 2) return std::nullopt;
    Chain c{expand, dw, project, {}};
    ConvBlockPlan& p = c.plan;
    p.expand = ea.conv2d(*expand);
    p.depthwise = da.depthwise(*dw);
    p.project = pa.conv2d(*project);
    if (!(graft_rt::is_pointwise(p.expand) || spatial_expand(p.expand)) || !graft_rt::is_pointwise(p.project) ||
        p.depthwise.mult != 1)
        return std::nullopt;
    if (p.expand.n <= 0 || p.depthwise.oh <= 0 || p.depthwise.ow <= 0) return std::nullopt;
    if (const Variable* r = project->input_or_null("r"); r == expand->output("y") || r == dw->output("y"))
        return std::nullopt;
    p.act_expand = act_params(*expand, ea.activation);
    p.act_depthwise = act_params(*dw, da.activation);
    p.act_project = act_params(*project, pa.activation);
    const auto& d = p.depthwise;
    const std::size_t expanded = static_cast<std::size_t>(d.h * d.w * d.cin) * sizeof(float);
    if (!mode.all && expanded <= band_budget()) return std::nullopt;  // it stays in L2 anyway
    i64 rows = mode.rows;
    if (!rows) {
        rows = 1;
        while (rows < d.oh &&
               static_cast<std::size_t>(band_floats(p, rows + 1, false).total()) * sizeof(float) <= band_budget())
            ++rows;
    }
    p.band_rows = std::min(rows, d.oh);
    return c;
}

/// One task's scratch and the expanded rows it holds.
struct Band {
    float* ebuf;  // expanded rows [held_a, held_b) of image `image`
    float* dbuf;  // the band's depthwise output
    float* qbuf;  // an int8 / bf16 product's rows
    i64 image = -1, held_a = 0, held_b = 0;
};

/// The weights of the expand or the project: packed for the fp32 GEMM (a spatial expand's as its
/// [kh * kw * cin, cout] patch matrix), or for qgemm (int8 / bf16, pointwise only:
/// cpu/gemm/conv_kernel.hpp's conv_precision decides, as for the convolution alone).
struct Pointwise {
    cpu::gemm::BMatrix fp;
    cpu::gemm::QMatrix q;
    bool lowp = false;
    void run(i64 M, i64 N, i64 K, const float* a, float* c, const cpu::gemm::Epilogue& e, float* qbuf) const {
        if (lowp)
            cpu::gemm::qgemm(M, N, K, a, K, q, c, N, e, qbuf, nullptr);
        else
            cpu::gemm::gemm(M, N, K, a, K, fp, c, N, e, nullptr);
    }
};

struct BlockRun {
    ConvBlockPlan p;
    bool spatial;  // the expand is not pointwise (spatial_expand): it runs as a convolution
    Pointwise we, wp;
    const float *be, *wd, *bd, *bp;
};

/// Output rows [o0, o1) of image n.
void run_band(const BlockRun& k, Band& s, const float* x, const float* r, float* y, i64 n, i64 o0, i64 o1) {
    const auto& d = k.p.depthwise;
    const i64 W = d.w, E = d.cin, Cin = k.p.expand.cin, Cout = k.p.project.cout, OW = d.ow;
    const RowSpan need = rows_needed(d, o0, o1);
    i64 from = need.a;  // first row to compute
    if (s.image == n && need.a >= s.held_a && need.a < s.held_b && need.b >= s.held_b) {
        // Rows the previous band computed move to the front; only the new ones are computed.
        std::memmove(s.ebuf, s.ebuf + (need.a - s.held_a) * W * E,
                     static_cast<std::size_t>((s.held_b - need.a) * W * E) * sizeof(float));
        from = s.held_b;
    }
    s.image = n, s.held_a = need.a, s.held_b = need.b;
    if (need.b > from) {
        cpu::gemm::Epilogue e;
        e.bias = k.be;
        e.act = &k.p.act_expand;
        float* rows = s.ebuf + (from - need.a) * W * E;
        if (k.spatial) {  // output rows [from, need.b) of image n: the same image, the padding moved up
            graft_rt::Conv2DParams c = k.p.expand;
            c.n = 1;
            c.oh = need.b - from;
            c.pad_top -= from * c.stride_h;
            cpu::gemm::conv2d(c, x + n * c.h * c.w * Cin, k.we.fp, rows, e, nullptr);
        } else {
            k.we.run((need.b - from) * W, E, Cin, x + (n * d.h + from) * W * Cin, rows, e, s.qbuf);
        }
    }
    // The held rows as an image of their own: rows above a are padding only at the image top.
    graft_rt::DepthwiseParams bd = d;
    bd.n = 1;
    bd.h = need.b - need.a;
    bd.pad_top = d.pad_top + need.a - o0 * d.stride_h;
    bd.oh = o1 - o0;
    cpu::depthwise2d_nhwc(s.ebuf, k.wd, k.bd, s.dbuf, bd, k.p.act_depthwise, nullptr);
    cpu::gemm::Epilogue e;
    e.bias = k.bp;
    const i64 out = (n * d.oh + o0) * OW * Cout;
    if (r) {
        e.residual = r + out;
        e.ldr = Cout;
    }
    e.act = &k.p.act_project;
    k.wp.run((o1 - o0) * OW, Cout, E, s.dbuf, y + out, e, s.qbuf);
}

}  // namespace

std::unordered_map<const Operator*, ConvBlockPlan> fuse_conv_blocks(Graph& g) {
    std::unordered_map<const Operator*, ConvBlockPlan> plans;
    const FuseMode mode = fuse_mode();
    if (!mode.on) return plans;
    // An op joins one chain at most: in MobileNet v1's pw -> dw -> pw -> dw -> pw, the middle
    // pointwise op is the project of one chain and the expand of the next.
    std::vector<Chain> chains;
    std::set<const Operator*> taken;
    for (Operator* op : g.topological_order()) {
        if (taken.count(op)) continue;
        auto c = match(g, op, mode);
        if (!c || taken.count(c->depthwise) || taken.count(c->project)) continue;
        taken.insert({c->expand, c->depthwise, c->project});
        chains.push_back(std::move(*c));
    }
    for (Chain& c : chains) {
        NamedVars in{{"x", c.expand->input("x")}, {"we", c.expand->input("w")}};
        const auto add = [&](const Operator* op, const char* name, const char* as) {
            if (Variable* v = op->input_or_null(name)) in.emplace_back(as, v);
        };
        add(c.expand, "b", "be");
        add(c.depthwise, "w", "wd");
        add(c.depthwise, "b", "bd");
        add(c.project, "w", "wp");
        add(c.project, "b", "bp");
        add(c.project, "r", "r");
        Variable* y = c.project->output("y");
        const std::string name = g.unique_name(c.project->name() + "/block");
        const std::string layer = c.project->layer();
        g.remove_op(c.project);
        g.remove_op(c.depthwise);
        g.remove_op(c.expand);
        Operator* op = g.add_op(kConvBlock, name, std::move(in), {{"y", y}}, {});
        op->set_layer(layer);
        plans.emplace(op, c.plan);
    }
    if (!chains.empty()) g.remove_unused_variables();
    return plans;
}

std::unique_ptr<native::Kernel> build_conv_block(native::BuildContext& b, const ConvBlockPlan& plan) {
    const Operator& op = b.op();
    auto k = std::make_shared<BlockRun>();
    k->p = plan;
    k->spatial = !graft_rt::is_pointwise(plan.expand);
    const auto packed = [&](const char* name, const graft_rt::Conv2DParams& conv) {
        const auto& w = static_cast<const ConstantVariable&>(*op.input(name));
        const i64 K = conv.kh * conv.kw * conv.cin, N = conv.cout;
        const std::string dims = std::to_string(N) + "x" + std::to_string(K);
        Pointwise m;
        // The tags make_conv2d_kernel uses: programs of other batch sizes share the packing.
        if (const Precision lowp = cpu::gemm::conv_precision(b.precision(), conv); lowp != Precision::fp32) {
            m.lowp = true;
            m.q = cpu::gemm::qview(cpu::gemm::qpack_shared(b, w, K, N, lowp), K, N);
            return m;
        }
        m.fp.data = b.keep_shared(w, "pack_b " + dims, [&] { return cpu::gemm::pack_b(w.data().data(), N, K, N); });
        m.fp.packed = true;
        return m;
    };
    k->we = packed("we", plan.expand);
    k->wp = packed("wp", plan.project);
    // The weights and biases are constants (match() checked): the program keeps their data.
    const auto constant = [&](const char* name) -> const float* {
        const Variable* v = op.input_or_null(name);
        if (!v) return nullptr;
        const auto& data = static_cast<const ConstantVariable*>(v)->shared_data();
        b.keep(data);
        return data->data();
    };
    k->be = constant("be");
    k->wd = constant("wd");
    k->bd = constant("bd");
    k->bp = constant("bp");
    const int max_tasks = cpu::ThreadPool::hardware_threads();
    const BandFloats bf = band_floats(plan, plan.band_rows, k->we.lowp || k->wp.lowp);
    const i64 per_task = bf.total();
    const native::Slot ws = b.workspace(static_cast<std::size_t>(per_task * max_tasks));
    const native::Slot x = b.in("x"), y = b.out("y");
    const auto r = optional_in(b, "r");
    return native::make_kernel([=](const native::RunContext& c) {
        const BlockRun& run = *k;
        const auto& dp = run.p.depthwise;
        const i64 rows = dp.n * dp.oh, bands = (rows + run.p.band_rows - 1) / run.p.band_rows;
        const i64 tasks = std::min<i64>({static_cast<i64>(cpu::pool_size(c.pool)), max_tasks, bands});
        const float* xp = c.at(x);
        const float* rp = at_or_null(c, r);
        float* yp = c.at(y);
        float* scratch = c.at(ws);
        // Each task takes a contiguous range of the batch's output rows, in bands inside one image.
        cpu::parallel_for(c.pool, tasks, [&](i64 t) {
            float* own = scratch + t * per_task;
            Band s{own, own + bf.ebuf, own + bf.ebuf + bf.dbuf};
            const i64 r0 = t * rows / tasks, r1 = (t + 1) * rows / tasks;
            for (i64 row = r0; row < r1;) {
                const i64 n = row / dp.oh, o0 = row % dp.oh;
                const i64 o1 = std::min({o0 + run.p.band_rows, dp.oh, o0 + (r1 - row)});
                run_band(run, s, xp, rp, yp, n, o0, o1);
                row += o1 - o0;
            }
        });
    });
}

}  // namespace graft::ops
