// Einsum (opset 12) of one or two operands, lowered to graft's existing ops: a transpose is a
// renaming of the value's logical dimensions (free), a subscript that leaves the result is graft's
// Reduce (sum), and the product of two operands is one BatchMatMul: each operand viewed as
// [batch, free, contracted] (the subscripts they share and keep, their own, those they share and
// sum over) by a Reshape, and the result viewed with the output's dimensions again. An outer
// product contracts a dimension of size 1. '...' stands for the dimensions a subscript list
// leaves unnamed, aligned from the right across the operands. Refused, naming the node and the
// equation: a subscript repeated within one operand (a diagonal), more than two operands, and
// dimensions that differ between the operands (broadcasting).
#include <algorithm>
#include <string>

#include "frontend/onnx/ops/ops.hpp"

namespace graft::onnx {

namespace {

using i64 = std::int64_t;

/// A subscript: a letter's character code, or kEllipsis + j for the j-th dimension '...' stands
/// for (counted from the left of the widest '...').
constexpr int kEllipsis = 256;

/// What graft's Einsum takes, for messages.
const char* const kSupported =
    "graft takes Einsum of one or two operands whose subscripts each appear once per operand: transposes, sums over "
    "subscripts, inner, outer, matrix and batched matrix products, with '...' for unnamed leading dimensions";

struct Term {
    std::vector<int> letters;  ///< the named subscripts, in order, '...' as -1
    bool ellipsis = false;
};

/// One operand: its value and the subscript of each logical dimension.
struct Operand {
    Value v;
    std::vector<int> subs;
};

std::string sub_name(int s) {
    return s >= kEllipsis ? "...(" + std::to_string(s - kEllipsis) + ")" : std::string(1, static_cast<char>(s));
}

Term parse_term(const NodeContext& ctx, const std::string& eq, const std::string& t) {
    Term term;
    for (std::size_t i = 0; i < t.size(); ++i) {
        const char c = t[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
            term.letters.push_back(c);
        } else if (c == '.' && t.compare(i, 3, "...") == 0 && !term.ellipsis) {
            term.ellipsis = true;
            term.letters.push_back(-1);
            i += 2;
        } else {
            ctx.fail_format("equation '" + eq + "': unexpected '" + std::string(1, c) + "' in subscripts '" + t + "'");
        }
    }
    return term;
}

/// `term`'s subscripts with '...' expanded to the last `m` of `widest` ellipsis dimensions.
std::vector<int> expand(const Term& term, std::size_t m, std::size_t widest) {
    std::vector<int> out;
    for (int l : term.letters) {
        if (l >= 0) {
            out.push_back(l);
            continue;
        }
        for (std::size_t j = widest - m; j < widest; ++j) out.push_back(kEllipsis + static_cast<int>(j));
    }
    return out;
}

bool has(const std::vector<int>& v, int s) { return std::find(v.begin(), v.end(), s) != v.end(); }

/// `o`'s dimension of subscript `s` (it has it).
std::size_t dim_of(const Operand& o, int s) { return static_cast<std::size_t>(std::find(o.subs.begin(), o.subs.end(), s) - o.subs.begin()); }

i64 size_of(const Operand& o, int s) { return o.v.var->size(o.v.logical[dim_of(o, s)]); }

/// `o` summed over its subscripts not in `keep`.
Operand sum_out(NodeContext& ctx, const Operand& o, const std::vector<int>& keep, const std::string& suffix) {
    std::vector<i64> axes;
    Operand r;
    for (std::size_t i = 0; i < o.subs.size(); ++i) {
        if (has(keep, o.subs[i])) r.subs.push_back(o.subs[i]);
        else axes.push_back(static_cast<i64>(i));
    }
    if (axes.empty()) return o;
    r.v = reduce(ctx, o.v, "sum", axes, false, suffix);
    return r;
}

/// `o`'s value with its dimensions logically in the order `subs` (a renaming, no op).
Value arranged(const Operand& o, const std::vector<int>& subs) {
    std::vector<Axis> axes;
    for (int s : subs) axes.push_back(o.v.logical[dim_of(o, s)]);
    Value v = o.v;
    v.logical = Order(std::move(axes));
    return v;
}

/// The product of the sizes of `subs` in `o`: kDynamic if one is; UnsupportedError if a dynamic
/// size meets another group than the batch (`dynamic_ok`).
i64 group_size(const NodeContext& ctx, const Operand& o, const std::vector<int>& subs, bool dynamic_ok, const std::string& eq) {
    i64 p = 1;
    for (int s : subs) {
        const i64 d = size_of(o, s);
        if (d == kDynamic) {
            if (!dynamic_ok)
                ctx.fail_unsupported("equation '" + eq + "': subscript " + sub_name(s) +
                                     " has the dynamic batch size and is not shared by both operands and the output");
            p = kDynamic;
        } else if (p != kDynamic) {
            p = checked::product(ctx.where(), "Einsum group size", {p, d});
        }
    }
    return p;
}

void einsum(NodeContext& ctx) {
    const std::string raw = ctx.config().get_string("equation");
    std::string eq;
    for (char c : raw)
        if (c != ' ') eq += c;
    const std::size_t arrow = eq.find("->");
    if (arrow != std::string::npos && eq.find("->", arrow + 2) != std::string::npos) ctx.fail_format("equation '" + raw + "' has two '->'");
    const std::string lhs = eq.substr(0, arrow);
    std::vector<Term> terms;
    for (std::size_t start = 0;;) {
        const std::size_t comma = lhs.find(',', start);
        terms.push_back(parse_term(ctx, raw, lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    if (terms.size() != ctx.num_inputs())
        ctx.fail_format("equation '" + raw + "' names " + std::to_string(terms.size()) + " operands, the node has " +
                        std::to_string(ctx.num_inputs()) + " inputs");
    if (terms.size() > 2) ctx.fail_unsupported("equation '" + raw + "': " + std::to_string(terms.size()) + " operands; " + kSupported);
    for (std::size_t i = 0; i < terms.size(); ++i)
        if (!ctx.has_input(i)) ctx.fail_format("input " + std::to_string(i) + " is missing");

    // The dimensions '...' stands for in each operand, and the widest of them.
    std::vector<std::size_t> m(terms.size(), 0);
    std::size_t widest = 0;
    for (std::size_t i = 0; i < terms.size(); ++i) {
        const std::size_t rank = ctx.input(i).logical.ndim(), named = terms[i].letters.size() - (terms[i].ellipsis ? 1 : 0);
        if (terms[i].ellipsis ? rank < named : rank != named)
            ctx.fail_shape("equation '" + raw + "': operand " + std::to_string(i) + " has rank " + std::to_string(rank) + ", its subscripts name " +
                           std::to_string(named) + " dimensions");
        m[i] = rank - named;
        widest = std::max(widest, m[i]);
    }
    std::vector<Operand> ops;
    for (std::size_t i = 0; i < terms.size(); ++i) {
        Operand o{ctx.input(i), expand(terms[i], m[i], widest)};
        for (std::size_t a = 0; a < o.subs.size(); ++a)
            for (std::size_t b = 0; b < a; ++b)
                if (o.subs[a] == o.subs[b])
                    ctx.fail_unsupported("equation '" + raw + "': subscript " + sub_name(o.subs[a]) + " appears twice in operand " +
                                         std::to_string(i) + " (a diagonal); " + kSupported);
        ops.push_back(std::move(o));
    }

    // The output's subscripts: as written, or '...' then the letters that appear once, sorted.
    std::vector<int> out;
    if (arrow != std::string::npos) {
        const Term t = parse_term(ctx, raw, eq.substr(arrow + 2));
        if (t.ellipsis && std::none_of(terms.begin(), terms.end(), [](const Term& x) { return x.ellipsis; }))
            ctx.fail_format("equation '" + raw + "': the output has '...' and no operand does");
        out = expand(t, widest, widest);
        for (std::size_t a = 0; a < out.size(); ++a) {
            if (std::count(out.begin(), out.end(), out[a]) > 1)
                ctx.fail_format("equation '" + raw + "': output subscript " + sub_name(out[a]) + " appears twice");
            bool found = false;
            for (const auto& o : ops) found = found || has(o.subs, out[a]);
            if (!found) ctx.fail_format("equation '" + raw + "': output subscript " + sub_name(out[a]) + " is in no operand");
        }
    } else {
        for (std::size_t j = 0; j < widest; ++j) out.push_back(kEllipsis + static_cast<int>(j));
        std::vector<int> once;
        for (int c = 0; c < kEllipsis; ++c) {
            int n = 0;
            for (const auto& o : ops) n += static_cast<int>(std::count(o.subs.begin(), o.subs.end(), c));
            if (n == 1) once.push_back(c);
        }
        out.insert(out.end(), once.begin(), once.end());
    }

    if (ops.size() == 1) {
        const Operand r = sum_out(ctx, ops[0], out, "sum");
        return ctx.set_outputs({arranged(r, out)});
    }

    // Two operands. A subscript of one operand alone that leaves the result is summed over first.
    Operand a = ops[0], b = ops[1];
    std::vector<int> keep_a = out, keep_b = out;
    keep_a.insert(keep_a.end(), b.subs.begin(), b.subs.end());
    keep_b.insert(keep_b.end(), a.subs.begin(), a.subs.end());
    a = sum_out(ctx, a, keep_a, "sum_a");
    b = sum_out(ctx, b, keep_b, "sum_b");
    std::vector<int> batch, free_a, free_b, contracted;
    for (int s : a.subs) {
        if (!has(b.subs, s)) {
            free_a.push_back(s);
            continue;
        }
        const i64 da = size_of(a, s), db = size_of(b, s);
        if (da != db)
            ctx.fail_unsupported("equation '" + raw + "': subscript " + sub_name(s) + " has size " + std::to_string(da) + " in operand 0 and " +
                                 std::to_string(db) + " in operand 1 (broadcasting); " + kSupported);
        (has(out, s) ? batch : contracted).push_back(s);
    }
    for (int s : b.subs)
        if (!has(a.subs, s)) free_b.push_back(s);
    // Batch subscripts in the output's order, so that the result needs the fewest moves.
    std::stable_sort(batch.begin(), batch.end(), [&](int x, int y) {
        return std::find(out.begin(), out.end(), x) < std::find(out.begin(), out.end(), y);
    });
    const i64 B = group_size(ctx, a, batch, true, raw), M = group_size(ctx, a, free_a, false, raw),
              K = group_size(ctx, a, contracted, false, raw), N = group_size(ctx, b, free_b, false, raw);
    std::vector<int> order_a = batch, order_b = batch;
    order_a.insert(order_a.end(), free_a.begin(), free_a.end());
    order_a.insert(order_a.end(), contracted.begin(), contracted.end());
    order_b.insert(order_b.end(), contracted.begin(), contracted.end());
    order_b.insert(order_b.end(), free_b.begin(), free_b.end());
    const Value x3 = reshape(ctx, arranged(a, order_a), {B, M, K}, "a3");
    const Value y3 = reshape(ctx, arranged(b, order_b), {B, K, N}, "b3");
    const Value p = batch_matmul(ctx, x3, y3, "matmul");
    // The product [B, M, N] viewed as [batch..., free_a..., free_b...], then in the output's order.
    Operand r;
    Shape dims;
    for (int s : batch) r.subs.push_back(s), dims.push_back(size_of(a, s));
    for (int s : free_a) r.subs.push_back(s), dims.push_back(size_of(a, s));
    for (int s : free_b) r.subs.push_back(s), dims.push_back(size_of(b, s));
    r.v = reshape(ctx, p, dims, "result");
    ctx.set_outputs({arranged(r, out)});
}

}  // namespace

void register_einsum(Registry& r) { add(r, "Einsum", einsum); }

}  // namespace graft::onnx
