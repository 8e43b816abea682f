// tools/graft/bench.cpp - `graft bench`: time Session::run in-process.
//
// Reports the median and min of --iters timed runs (after warm-up), the time from the file to
// the first result (load + compile + first run), peak RSS and the session's arena size; with
// --check REF.npy, the largest deviation of the first output from a reference.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <sys/resource.h>

#include "commands.hpp"
#include "graft/graft.hpp"
#include "graft/printable.hpp"
#include "npy.hpp"

namespace graft::cli {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

double peak_rss_mb() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_maxrss) / 1024.0;  // Linux: kilobytes
}

std::vector<Tensor> make_inputs(const Model& m, const BenchOptions& o) {
    std::vector<Tensor> inputs(m.num_inputs());
    std::vector<bool> given(m.num_inputs(), false);
    std::size_t positional = 0;
    for (const auto& arg : o.inputs) {
        auto eq = arg.find('=');
        std::size_t i = positional;
        std::string file = arg;
        if (eq != std::string::npos && !std::filesystem::exists(arg)) {
            const std::string name = arg.substr(0, eq);
            file = arg.substr(eq + 1);
            for (i = 0; i < m.num_inputs() && m.input_name(i) != name; ++i) {
            }
            if (i == m.num_inputs()) throw Error(fmt::format("the model has no input '{}'", name));
        } else {
            ++positional;
        }
        if (i >= m.num_inputs()) throw Error(fmt::format("too many inputs: the model takes {}", m.num_inputs()));
        inputs[i] = read_npy(file);
        given[i] = true;
    }
    std::mt19937 rng(12345);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (given[i]) continue;
        if (!o.inputs.empty()) throw Error(fmt::format("no --input for model input '{}'", m.input_name(i)));
        Shape s = m.input_shape(i);
        for (auto& d : s)
            if (d == kDynamic) d = o.batch;
        Tensor t(s);
        const DType dt = m.input_dtype(i);  // an integer input gets 0 .. 7 (small indices), a bool one 0 / 1
        for (std::size_t k = 0; k < t.size(); ++k)
            t.data()[k] = dt == DType::float32 ? dist(rng) : float(rng() % (dt == DType::boolean ? 2u : 8u));
        inputs[i] = std::move(t);
    }
    return inputs;
}

/// An operator's milliseconds per run of the session over `iters` profiled runs (a batch run in
/// slices runs each operator once per slice).
double ms_per_run(const OpProfile& p, int iters) { return 1e3 * p.seconds / static_cast<double>(std::max(1, iters)); }

/// The `top` slowest operators, then the time per operator type.
void print_profile(const std::vector<OpProfile>& profile, double total_ms, std::size_t top, int iters) {
    auto ms = [iters](const OpProfile& p) { return ms_per_run(p, iters); };
    auto share = [total_ms](double v) { return total_ms > 0 ? 100.0 * v / total_ms : 0.0; };
    std::vector<const OpProfile*> order;
    for (const auto& p : profile) order.push_back(&p);
    std::stable_sort(order.begin(), order.end(), [&](const OpProfile* a, const OpProfile* b) { return ms(*a) > ms(*b); });
    fmt::print("  per operator: {:.4g} ms per run in {} operators; the {} slowest:\n", total_ms, profile.size(),
               std::min(top, order.size()));
    fmt::print("  {:>9}  {:>6}  {:<18} {}\n", "ms", "share", "type", "operator (layer)");
    for (std::size_t i = 0; i < order.size() && i < top; ++i) {
        const OpProfile& p = *order[i];
        fmt::print("  {:>9.4f}  {:>5.1f}%  {:<18} {}{}\n", ms(p), share(ms(p)), printable(p.type), printable(p.name),
                   p.layer.empty() || p.layer == p.name ? "" : " (" + printable(p.layer) + ")");
    }
    std::map<std::string, std::pair<double, int>> by_type;
    for (const auto& p : profile) {
        auto& t = by_type[p.type];
        t.first += ms(p);
        ++t.second;
    }
    std::vector<std::pair<std::string, std::pair<double, int>>> types(by_type.begin(), by_type.end());
    std::stable_sort(types.begin(), types.end(), [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
    fmt::print("  per operator type:\n");
    for (const auto& [type, t] : types)
        fmt::print("  {:>9.4f}  {:>5.1f}%  {:<18} x{}\n", t.first, share(t.first), printable(type), t.second);
}

/// Bytes of constants a run reads beyond reading each once: a recurrent layer (LSTM, GRU,
/// SimpleRNN, ConvLSTM2D) applies its recurrent weights `r` at every time step, so a sequence of T
/// steps reads them T times. Sequences of unknown length count once.
double recurrent_rereads(const Graph& g) {
    double extra = 0;
    for (const Operator* op : g.operators()) {
        const std::string& t = op->type();
        if (t != "LSTM" && t != "GRU" && t != "SimpleRNN" && t != "ConvLSTM2D") continue;
        const Variable* r = op->input_or_null("r");
        const Variable* x = op->input_or_null("x");
        if (!r || !x || !r->is_constant()) continue;
        const auto at = x->order().find(Axis::T);
        const std::int64_t steps = at ? x->shape()[*at] : 1;
        if (steps > 1) extra += 4.0 * static_cast<double>(r->numel()) * static_cast<double>(steps - 1);
    }
    return extra;
}

}  // namespace

void bench(const BenchOptions& o) {
    if (o.iters < 1) throw Error("--iters must be >= 1");
    if (o.batch < 1) throw Error("--batch must be >= 1");
    if (o.threads < 0) throw Error("--threads must be >= 0");
    const auto t0 = Clock::now();
    LoadOptions lo;
    lo.weights_path = o.model.weights;
    lo.hdf5 = o.model.hdf5;
    lo.threads = o.threads;
    lo.opt_level = o.model.opt_level;
    lo.precision = precision_of(o.model);
    lo.batch_slice = o.model.batch_slice;
    lo.huge_pages = !o.model.no_huge_pages;
    Model model = load(o.model.path, lo);
    note_precision(o.model, model);
    const double load_ms = ms_since(t0);
    auto inputs = make_inputs(model, o);
    Session session = model.session();
    const auto t1 = Clock::now();
    auto out = session.run(inputs);
    const double first_run_ms = ms_since(t1);
    const BatchPlan plan = session.batch_plan(inputs);
    const double first_result_ms = ms_since(t0);

    // Accuracy of the first output against a reference (before timing, on the first result).
    double max_err = 0, max_excess = -1, ref_max = 0;
    bool checked = false, ok = true;
    std::size_t top1_rows = 0, top1_agree = 0;  // rows of the last axis whose largest entry is the reference's
    if (!o.check.empty()) {
        Tensor ref = read_npy(o.check);
        const Tensor& got = out.at(0);
        if (ref.shape() != got.shape())
            throw ShapeError(fmt::format("reference {} has shape {}, the output '{}' has {}", o.check, shape_str(ref.shape()),
                                         model.output_name(0), shape_str(got.shape())));
        for (std::size_t k = 0; k < ref.size(); ++k) {
            const double d = std::fabs(static_cast<double>(got.data()[k]) - ref.data()[k]);
            if (!(d <= max_err)) max_err = d;  // NaN propagates
            ref_max = std::max(ref_max, std::fabs(static_cast<double>(ref.data()[k])));
            const double excess = d - (o.atol + o.rtol * std::fabs(static_cast<double>(ref.data()[k])));
            if (!(excess <= 0)) ok = false;
            max_excess = std::max(max_excess, excess);
        }
        const std::size_t width = ref.shape().empty() ? 1 : static_cast<std::size_t>(ref.shape().back());
        if (width > 1)
            for (std::size_t r = 0; r + width <= ref.size(); r += width, ++top1_rows) {
                const float* g = got.data() + r;
                const float* f = ref.data() + r;
                top1_agree += std::max_element(g, g + width) - g == std::max_element(f, f + width) - f;
            }
        checked = true;
    }

    // Warm-up: --warmup runs, continued up to 0.5 s but never beyond max(warmup, iters) runs.
    const int max_warm = std::max(o.warmup, o.iters);
    int warm = 0;
    const auto tw = Clock::now();
    while (warm < o.warmup || (ms_since(tw) < 500 && warm < max_warm)) {
        session.run(inputs);
        ++warm;
    }
    std::vector<double> times(static_cast<std::size_t>(o.iters));
    for (auto& t : times) {
        const auto s = Clock::now();
        session.run(inputs);
        t = ms_since(s);
    }
    std::sort(times.begin(), times.end());
    const std::size_t n = times.size();
    const double median = n % 2 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
    const double min = times.front();
    const std::int64_t batch = inputs.empty() || inputs[0].shape().empty() ? 0 : inputs[0].shape()[0];
    const double arena_mb = static_cast<double>(session.arena_bytes()) / (1024.0 * 1024.0);
    // The constants a run streams through (weights, biases, tables), for the roofline of bench/compare.js.
    double weight_bytes = 0;
    for (const Variable* v : model.graph().variables())
        if (v->is_constant()) weight_bytes += 4.0 * static_cast<double>(v->numel());
    const double weight_mb = weight_bytes / (1024.0 * 1024.0);
    const double weight_read_mb = (weight_bytes + recurrent_rereads(model.graph())) / (1024.0 * 1024.0);

    std::vector<OpProfile> profile;
    double profiled_ms = 0;  // per run, all operators
    if (o.profile > 0) {
        session.set_profiling(true);
        for (int i = 0; i < o.iters; ++i) session.run(inputs);
        session.set_profiling(false);
        profile = session.profile();
        for (const auto& p : profile) profiled_ms += ms_per_run(p, o.iters);
    }

    if (o.json) {
        rapidjson::StringBuffer buf;
        rapidjson::Writer<rapidjson::StringBuffer> w(buf);
        auto str = [&w](const char* key, const std::string& v) {
            w.Key(key);
            w.String(v.c_str(), static_cast<rapidjson::SizeType>(v.size()));
        };
        auto num = [&w](const char* key, double v) {
            w.Key(key);
            w.Double(v);
        };
        auto integer = [&w](const char* key, std::int64_t v) {
            w.Key(key);
            w.Int64(v);
        };
        w.StartObject();
        str("model", o.model.path);
        str("precision", precision_name(model.precision()));
        integer("batch", batch);
        integer("threads", session.threads());
        integer("slice", plan.slice);
        integer("warmup", warm);
        integer("iters", static_cast<std::int64_t>(n));
        num("median_ms", median);
        num("min_ms", min);
        num("load_ms", load_ms);
        num("first_run_ms", first_run_ms);
        num("first_result_ms", first_result_ms);
        num("peak_rss_mb", peak_rss_mb());
        num("arena_mb", arena_mb);
        num("weight_mb", weight_mb);
        num("weight_read_mb", weight_read_mb);
        if (checked) {
            str("check", o.check);
            num("max_abs_err", max_err);
            num("ref_max_abs", ref_max);
            w.Key("ok");
            w.Bool(ok);
        }
        if (top1_rows) {
            integer("top1_rows", static_cast<std::int64_t>(top1_rows));
            integer("top1_agree", static_cast<std::int64_t>(top1_agree));
        }
        if (o.profile > 0) {
            w.Key("profile");
            w.StartArray();
            for (const auto& p : profile) {
                w.StartObject();
                str("type", printable(p.type));
                str("name", printable(p.name));
                str("layer", printable(p.layer));
                num("ms", ms_per_run(p, o.iters));
                w.EndObject();
            }
            w.EndArray();
        }
        w.EndObject();
        fmt::print("{}\n", buf.GetString());
    } else {
        fmt::print("{} {} batch={} threads={} iters={} (warm-up {}): median {:.4g} ms, min {:.4g} ms\n", o.model.path,
                   precision_name(model.precision()), batch, session.threads(), n, warm, median, min);
        fmt::print("  load {:.1f} ms, compile + first run {:.1f} ms, file to first result {:.1f} ms\n", load_ms,
                   first_run_ms, first_result_ms);
        fmt::print("  peak RSS {:.1f} MB, arena {:.2f} MB, weights {:.2f} MB ({:.2f} MB read per run)\n", peak_rss_mb(),
                   arena_mb, weight_mb, weight_read_mb);
        if (plan.slice < plan.batch) fmt::print("  runs the batch in slices of {} (--batch-slice)\n", plan.slice);
        if (!plan.mixing.empty()) fmt::print("  runs the batch whole: {}\n", printable(plan.mixing));
        if (checked)
            fmt::print("  check vs {}: max |diff| {:.3g} ({}){}\n", o.check, max_err, ok ? "ok" : "FAILED",
                       top1_rows ? fmt::format(", top-1 the reference's in {} of {} rows", top1_agree, top1_rows) : "");
    }
    if (o.profile > 0 && !o.json) print_profile(profile, profiled_ms, static_cast<std::size_t>(o.profile), o.iters);
    if (checked && !ok) throw Error(fmt::format("output '{}' differs from {} by up to {:.3g} (atol {}, rtol {})",
                                                model.output_name(0), o.check, max_err, o.atol, o.rtol));
}

}  // namespace graft::cli
