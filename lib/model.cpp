// The host API: Model (a converted graph, compiled per batch size on first use) and Session
// (working memory for runs).
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <deque>
#include <exception>
#include <limits>
#include <type_traits>
#include <map>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "backend/native/batch_slices.hpp"
#include "backend/native/program.hpp"
#include "cpu/gemm/qgemm.hpp"
#include "cpu/threadpool.hpp"
#include "graft/graft.hpp"
#include "graft/ir/checked.hpp"
#include "graft/optimize/passes.hpp"
#include "limits_check.hpp"

namespace graft {

namespace {

/// What a compiled program is for: the batch size, then the inputs' free sizes other than the
/// batch (int64s) and the values of the value inputs (their elements as doubles), bytewise; the
/// second part is empty for most models.
using ProgramKey = std::pair<std::int64_t, std::string>;

/// The graph the optimizer pipeline of `opt_level` for the native backend made of `graph`.
Graph prepared(Graph graph, const Registry& registry, int opt_level) {
    graph.validate();
    check_dtypes(graph, registry);
    optimize::pipeline_for(opt_level, "native").run(graph, registry);  // ends with legalize_layout
    return graph;
}

}  // namespace

struct Model::Shared {
    // First, so destroyed last: the plugin libraries of the registry the model was made with.
    // The graph may hold objects a plugin created (variables, constants' data) and compiled
    // programs hold its kernels, so their code must stay loaded as long as the model lives.
    std::vector<std::shared_ptr<const void>> plugin_libraries;
    Graph graph;  // prepared; for a value-specialised model, the signature
    const Registry* registry = nullptr;
    int opt_level = 2;
    Precision precision = Precision::fp32;  // what runs (the request, where the CPU has it)
    std::vector<std::string> value_inputs;  // ValueSpecialisedGraph: their names,
    std::vector<std::size_t> value_indices; // their positions among the inputs,
    std::function<Graph(const std::map<std::string, Tensor>&)> specialise;  // and the conversion
    std::mutex mutex;                                                     // guards programs, recent
    std::map<ProgramKey, std::shared_ptr<const native::Program>> programs;
    std::deque<ProgramKey> recent;                                        // bounded programs, oldest first
    bool bounded = false;  // programs per free size or value: at most kMaxValuePrograms are kept
    std::mutex run_mutex;                                                 // serializes Model::run
    std::unique_ptr<Session> session;                                    // Model::run's session
    native::PackCache packs;  // prepacked weights, shared by all the programs below
    int threads = 1;                                                      // for new sessions

    Session& default_session();

    /// The graph with every free size as in `shapes` (the batch and any other), shapes inferred.
    Graph concrete(const std::vector<Shape>& shapes, const std::vector<Tensor>& inputs) const {
        Graph g = specialise ? specialised(inputs) : graph.clone();
        for (std::size_t i = 0; i < g.inputs().size(); ++i) {
            Variable* v = g.inputs()[i];
            Shape s = v->shape();
            for (std::size_t d = 0; d < s.size(); ++d)
                if (s[d] == kDynamic) s[d] = shapes[i][d];
            v->set_type(v->order(), s);
        }
        try {
            infer_shapes(g, *registry);
        } catch (const ShapeError& e) {  // e.g. a sequence too short for a 'valid' convolution
            if (!has_free_sizes(graph)) throw;
            std::string given;
            for (std::size_t i = 0; i < shapes.size(); ++i)
                given += (i ? ", '" : "'") + graph.input_name(i) + "' " + shape_str(shapes[i]);
            throw ShapeError("the model cannot run on inputs of these sizes (" + given + "): " + e.what());
        }
        return g;
    }

    /// The program for `key`, compiled on first use for inputs of `shapes` (`inputs` give the
    /// value inputs' values).
    std::shared_ptr<const native::Program> program(const ProgramKey& key, const std::vector<Shape>& shapes,
                                                   const std::vector<Tensor>& inputs) {
        std::lock_guard<std::mutex> lock(mutex);
        auto it = programs.find(key);
        if (it != programs.end()) return it->second;
        Graph g = concrete(shapes, inputs);
        auto p = native::Program::compile(std::move(g), *registry, &packs, precision);
        if (bounded) {
            if (recent.size() >= kMaxValuePrograms) {
                programs.erase(recent.front());
                recent.pop_front();
            }
            recent.push_back(key);
        }
        programs.emplace(key, p);
        return p;
    }

    /// `inputs`' shapes with the batch (each free size on an axis N) set to `batch`.
    std::vector<Shape> shapes_at(const std::vector<Tensor>& inputs, std::int64_t batch) const {
        std::vector<Shape> shapes;
        for (std::size_t i = 0; i < inputs.size(); ++i) {
            const Variable& v = *graph.inputs()[i];
            Shape s = inputs[i].shape();
            for (std::size_t d = 0; d < s.size(); ++d)
                if (v.shape()[d] == kDynamic && v.order()[d] == Axis::N) s[d] = batch;
            shapes.push_back(std::move(s));
        }
        return shapes;
    }

    /// Whether the graph at the other free sizes of `inputs` keeps the samples of a batch apart,
    /// and what a sample costs (backend/native/batch_slices.hpp); computed once per such sizes.
    struct SliceInfo {
        std::string mixing;  // native::batch_mixing: "" when the batch may run in slices
        native::SampleCosts costs;
    };
    std::map<std::string, std::shared_ptr<const SliceInfo>> slice_infos;  // by ProgramKey::second; guarded by mutex
    std::int64_t batch_slice = 0;                                         // LoadOptions::batch_slice

    std::shared_ptr<const SliceInfo> slice_info(const ProgramKey& key, const std::vector<Tensor>& inputs) {
        std::lock_guard<std::mutex> lock(mutex);
        auto it = slice_infos.find(key.second);
        if (it != slice_infos.end()) return it->second;
        auto info = std::make_shared<SliceInfo>();
        if (specialise) {
            info->mixing = "the graph depends on the values of inputs";
        } else {
            try {  // two batch sizes, so that no other size equals the batch by chance in both
                for (std::int64_t b : {2, 3})
                    if (info->mixing.empty()) info->mixing = native::batch_mixing(concrete(shapes_at(inputs, b), inputs), b);
                if (info->mixing.empty()) info->costs = native::sample_costs(concrete(shapes_at(inputs, 1), inputs));
            } catch (const Error& e) {
                info->mixing = std::string("the graph does not take a smaller batch: ") + e.what();
            }
        }
        if (slice_infos.size() >= kMaxValuePrograms) slice_infos.clear();
        slice_infos.emplace(key.second, info);
        return info;
    }

    /// How a batch of key.first runs on `threads` threads (Session::batch_plan).
    BatchPlan batch_plan(const ProgramKey& key, const std::vector<Tensor>& inputs, int threads) {
        BatchPlan plan{key.first, key.first, {}};
        if (key.first < 2) return plan;
        const auto info = slice_info(key, inputs);
        plan.mixing = info->mixing;
        if (!plan.mixing.empty() || batch_slice < 0) return plan;
        plan.slice = batch_slice > 0 ? std::min(batch_slice, key.first)
                                     : native::best_slice(info->costs, key.first, native::CacheModel::this_machine(threads));
        return plan;
    }

    /// The graph for the value inputs' values in `inputs`, converted and prepared; it must have
    /// the signature's inputs and as many outputs.
    Graph specialised(const std::vector<Tensor>& inputs) const {
        std::map<std::string, Tensor> values;
        for (std::size_t k = 0; k < value_indices.size(); ++k) values.emplace(value_inputs[k], inputs[value_indices[k]]);
        Graph g = prepared(specialise(values), *registry, opt_level);
        // Inputs must match; outputs leave as the model declares them (from_carrier), whatever
        // dtype the conversion gave them.
        auto check = [](const std::vector<Variable*>& got, const std::vector<Variable*>& want, bool types, const char* what) {
            if (got.size() != want.size())
                throw GraphError("the graph converted for these values has " + std::to_string(got.size()) + " " + what + ", the model " +
                                 std::to_string(want.size()));
            for (std::size_t i = 0; i < got.size(); ++i)
                if (types && (got[i]->dtype() != want[i]->dtype() || got[i]->shape() != want[i]->shape()))
                    throw GraphError(std::string("the graph converted for these values has ") + what + " " + got[i]->describe() +
                                     " where the model has " + want[i]->describe());
        };
        check(g.inputs(), graph.inputs(), true, "inputs");
        check(g.outputs(), graph.outputs(), false, "outputs");
        return g;
    }
};

struct Session::State {
    std::shared_ptr<Model::Shared> model;
    struct Arena {
        std::shared_ptr<const native::Program> program;
        std::unique_ptr<float[]> memory;  // new[] of float is 16-byte aligned; we align by hand
        std::byte* base = nullptr;
    };
    std::map<ProgramKey, Arena> arenas;
    // The slice each batch runs in (Model::Shared::batch_plan), with the LoadOptions::batch_slice
    // it was chosen under: run() plans a key once, not on every call.
    std::map<ProgramKey, std::pair<std::int64_t, std::int64_t>> slices;
    int threads = 1;
    std::unique_ptr<cpu::ThreadPool> pool;  // created on the first run when threads != 1
    bool profiling = false;
    std::vector<OpProfile> profile;                  // in the order operators first ran
    std::map<std::string, std::size_t> profile_index;  // type + name -> entry
    std::vector<double> kernel_seconds;              // one run's, per kernel

    void run_profiled(const native::Program& p, std::byte* base) {
        kernel_seconds.assign(p.kernel_count(), 0.0);
        p.run_timed(base, thread_pool(), kernel_seconds.data());
        for (std::size_t i = 0; i < p.kernel_count(); ++i) {
            const auto& o = p.origins()[i];
            auto [it, fresh] = profile_index.emplace(o.type + '\n' + o.name, profile.size());
            if (fresh) profile.push_back(OpProfile{o.type, o.name, o.layer, 0.0, 0});
            profile[it->second].seconds += kernel_seconds[i];
            ++profile[it->second].runs;
        }
    }

    cpu::ThreadPool* thread_pool() {
        if (!pool && threads != 1) pool = std::make_unique<cpu::ThreadPool>(threads);
        return pool.get();
    }

    /// The arena and program for `key`: `inputs` with their batch set to key.first.
    Arena& arena(const ProgramKey& key, const std::vector<Tensor>& inputs) {
        auto it = arenas.find(key);
        if (it != arenas.end()) return it->second;
        if (model->bounded && arenas.size() >= Model::kMaxValuePrograms) arenas.erase(arenas.begin());
        return arenas.emplace(key, arena_for(model->program(key, model->shapes_at(inputs, key.first), inputs)))
            .first->second;
    }

    /// Arenas 1, 2, ... beside arena(key) for slices run side by side (Session::run): the same
    /// program, memory of their own. Dropped with the arenas when those are bounded.
    Arena& lane_arena(const ProgramKey& key, const std::vector<Tensor>& inputs, int lane) {
        const Arena& first = arena(key, inputs);
        auto it = lane_arenas.find({key, lane});
        if (it != lane_arenas.end() && it->second.program == first.program) return it->second;
        if (lane_arenas.size() >= Model::kMaxValuePrograms) lane_arenas.clear();
        return lane_arenas.insert_or_assign({key, lane}, arena_for(first.program)).first->second;
    }
    std::map<std::pair<ProgramKey, int>, Arena> lane_arenas;

    static Arena arena_for(std::shared_ptr<const native::Program> program) {
        Arena a;
        a.program = std::move(program);
        const std::size_t floats = a.program->arena_bytes() / sizeof(float) + 64 / sizeof(float);
        a.memory.reset(new float[floats]());
        auto addr = reinterpret_cast<std::uintptr_t>(a.memory.get());
        a.base = reinterpret_cast<std::byte*>((addr + 63) / 64 * 64);
        return a;
    }
};

Session& Model::Shared::default_session() {
    // Non-owning: this session lives inside Shared, so owning Shared would be a cycle.
    if (!session) {
        auto state = std::make_unique<Session::State>();
        state->model = std::shared_ptr<Shared>(std::shared_ptr<Shared>{}, this);
        state->threads = threads;
        session.reset(new Session(std::move(state)));
    }
    return *session;
}

namespace {
/// int8 or bf16 only where it is faster than fp32 (cpu/gemm/qgemm.hpp).
Precision effective(Precision asked) {
    return asked != Precision::fp32 && cpu::gemm::qgemm_fast(asked) ? asked : Precision::fp32;
}
}  // namespace

Model::Model(Graph graph, const Registry& registry, int opt_level, Precision precision)
    : shared_(std::make_shared<Shared>()) {
    shared_->registry = &registry;
    shared_->opt_level = opt_level;
    shared_->precision = effective(precision);
    for (const auto& p : registry.plugins()) shared_->plugin_libraries.push_back(p.keepalive);
    shared_->graph = prepared(std::move(graph), registry, opt_level);
    shared_->bounded = has_free_sizes(shared_->graph);
}

Model::Model(ValueSpecialisedGraph source, const Registry& registry, int opt_level, Precision precision)
    : shared_(std::make_shared<Shared>()) {
    shared_->registry = &registry;
    shared_->opt_level = opt_level;
    shared_->precision = effective(precision);
    for (const auto& p : registry.plugins()) shared_->plugin_libraries.push_back(p.keepalive);
    if (!source.convert) throw Error("a value-specialised model needs its conversion function");
    for (const auto& name : source.value_inputs) {
        std::size_t i = 0;
        while (i < source.signature.inputs().size() && source.signature.input_name(i) != name) ++i;
        if (i == source.signature.inputs().size()) throw GraphError("value input '" + name + "' is not an input of the model");
        if (std::find(source.signature.inputs()[i]->shape().begin(), source.signature.inputs()[i]->shape().end(), kDynamic) !=
            source.signature.inputs()[i]->shape().end())
            throw ShapeError("value input '" + name + "' has a free size; its shape must be fixed");
        shared_->value_indices.push_back(i);
    }
    shared_->value_inputs = std::move(source.value_inputs);
    shared_->specialise = std::move(source.convert);
    shared_->graph = std::move(source.signature);
    shared_->bounded = true;
}
Model::~Model() = default;
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;

const Graph& Model::graph() const { return shared_->graph; }
const Registry& Model::registry() const { return *shared_->registry; }
std::size_t Model::num_inputs() const { return shared_->graph.inputs().size(); }
std::size_t Model::num_outputs() const { return shared_->graph.outputs().size(); }
std::string Model::input_name(std::size_t i) const { return shared_->graph.input_name(i); }
std::string Model::output_name(std::size_t i) const { return shared_->graph.output_name(i); }
Shape Model::input_shape(std::size_t i) const { return shared_->graph.inputs().at(i)->shape(); }
Shape Model::output_shape(std::size_t i) const { return shared_->graph.outputs().at(i)->shape(); }
DType Model::input_dtype(std::size_t i) const { return shared_->graph.inputs().at(i)->dtype(); }
DType Model::output_dtype(std::size_t i) const { return shared_->graph.outputs().at(i)->dtype(); }
const std::vector<std::string>& Model::value_inputs() const { return shared_->value_inputs; }

Session Model::session() const {
    auto state = std::make_unique<Session::State>();
    state->model = shared_;
    state->threads = shared_->threads;
    return Session(std::move(state));
}

void Model::set_threads(int threads) {
    if (threads < 0) throw Error("threads must be >= 0 (0: one per core), got " + std::to_string(threads));
    shared_->threads = threads;
}
int Model::threads() const { return shared_->threads; }

void Model::set_batch_slice(std::int64_t slice) {
    if (slice < -1)
        throw Error("batch_slice must be -1 (whole batches), 0 (graft chooses) or a slice size, got " + std::to_string(slice));
    shared_->batch_slice = slice;
}
std::int64_t Model::batch_slice() const { return shared_->batch_slice; }

void Model::set_huge_pages(bool on) { shared_->packs.set_huge_pages(on); }
bool Model::huge_pages() const { return shared_->packs.huge_pages(); }

Precision Model::precision() const { return shared_->precision; }

int Session::threads() const {
    return state_->threads == 0 ? cpu::ThreadPool::hardware_threads() : state_->threads;
}
void Session::set_profiling(bool on) {
    if (on && !state_->profiling) {
        state_->profile.clear();
        state_->profile_index.clear();
    }
    state_->profiling = on;
}
std::vector<OpProfile> Session::profile() const { return state_->profile; }

std::size_t Session::arena_bytes() const {
    std::size_t n = 0;
    for (const auto& [key, a] : state_->arenas) n += a.program->arena_bytes();
    return n;
}

std::vector<Tensor> Model::run(const std::vector<Tensor>& inputs) const {
    std::lock_guard<std::mutex> lock(shared_->run_mutex);
    return shared_->default_session().run(inputs);
}

std::map<std::string, Tensor> Model::run(const std::map<std::string, Tensor>& inputs) const {
    std::lock_guard<std::mutex> lock(shared_->run_mutex);
    return shared_->default_session().run(inputs);
}

namespace {

/// Writes input `t` into its slot as the graph holds values (graft/ir/dtype.hpp: float32 words,
/// an integer or bool value exactly): a float32 tensor for a float32 input is copied as is; any
/// other pair is converted element by element, each value checked to be one of `want` and exact
/// in float32. DTypeError naming the input, the dtype given and the one it takes otherwise.
void to_carrier(const Tensor& t, DType want, const std::string& name, float* slot, std::size_t first, std::size_t count) {
    if (t.dtype() == DType::float32 && want == DType::float32) {
        std::memcpy(slot, t.data() + first, count * sizeof(float));
        return;
    }
    for (std::size_t k = first; k < first + count; ++k) {
        const double v = t.at_double(k);
        const auto f = static_cast<float>(v);
        const bool exact = want == DType::float32 ? (v != v || static_cast<double>(f) == v)
                                                  : holds(want, v) && v <= double(kMaxExactInt) && v >= -double(kMaxExactInt);
        if (!exact) {
            char value[32];
            std::snprintf(value, sizeof value, "%.17g", v);
            throw DTypeError(
                "input '" + name + "' takes " + name_of(want) + " values; the " + name_of(t.dtype()) + " tensor given holds " +
                value + " (element " + std::to_string(k) + "), which " +
                (want == DType::float32 || holds(want, v)
                     ? std::string("graft holds exactly only up to 2^24 in magnitude")
                     : std::string("is no ") + name_of(want) + " value") +
                " (pass " + name_of(want) + " values, or " + (want == DType::float32 ? "integers" : "float32 values") + " that are exact)");
        }
        slot[k - first] = f;
    }
}

/// Writes an output's `count` values (float32 words) at element `first` of `t`, in its dtype.
void from_carrier(const float* slot, Tensor& t, std::size_t first, std::size_t count) {
    auto fill = [&](auto* out) {
        using T = std::remove_pointer_t<decltype(out)>;
        for (std::size_t k = 0; k < count; ++k) {
            if constexpr (std::is_same_v<T, bool>) {
                out[first + k] = slot[k] != 0.f;
            } else {  // a Cast made them integers of T; anything else (NaN, out of range) gives 0, never UB
                const double v = slot[k], lo = double(std::numeric_limits<T>::min());
                const double end = (double(std::numeric_limits<T>::max() / 2) + 1) * 2;  // max + 1, exact
                out[first + k] = v >= lo && v < end ? static_cast<T>(v) : T{};
            }
        }
    };
    switch (t.dtype()) {
        case DType::float32: std::memcpy(t.data() + first, slot, count * sizeof(float)); break;
        case DType::int64: fill(t.data<std::int64_t>()); break;
        case DType::int32: fill(t.data<std::int32_t>()); break;
        case DType::uint8: fill(t.data<std::uint8_t>()); break;
        case DType::uint16: fill(t.data<std::uint16_t>()); break;
        case DType::int8: fill(t.data<std::int8_t>()); break;
        case DType::boolean: fill(t.data<bool>()); break;
    }
}

}  // namespace

Session::Session(std::unique_ptr<State> s) : state_(std::move(s)) {}
Session::~Session() = default;
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;

namespace {

/// The program `inputs` need: ShapeError unless they fit the model's inputs.
ProgramKey program_key(const Model::Shared& model, const std::vector<Tensor>& inputs) {
    const Graph& g = model.graph;
    if (inputs.size() != g.inputs().size())
        throw ShapeError("the model takes " + std::to_string(g.inputs().size()) + " inputs, got " + std::to_string(inputs.size()));
    std::int64_t batch = -1;
    ProgramKey key{0, {}};
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const Variable& v = *g.inputs()[i];
        const Shape& want = v.shape();
        const Shape& got = inputs[i].shape();
        bool ok = got.size() == want.size();
        for (std::size_t d = 0; ok && d < want.size(); ++d)
            ok = want[d] == kDynamic ? got[d] >= 1 && got[d] <= kMaxElements : got[d] == want[d];
        if (!ok)
            throw ShapeError("input '" + g.input_name(i) + "' has shape " + shape_str(got) + ", expected " + shape_str(want) +
                             " (? is free: any size from 1)");
        // The batch is the size given for the batch axis (inputs with fixed sizes only have none);
        // every other free size is the input's own.
        for (std::size_t d = 0; d < want.size(); ++d) {
            if (want[d] != kDynamic) continue;
            if (v.order()[d] != Axis::N) {
                key.second.append(reinterpret_cast<const char*>(&got[d]), sizeof got[d]);
            } else if (batch == -1) {
                batch = got[d];
            } else if (got[d] != batch) {
                throw ShapeError("input '" + g.input_name(i) + "' has batch " + std::to_string(got[d]) + ", the other inputs have " +
                                 std::to_string(batch));
            }
        }
    }
    key.first = batch == -1 ? 0 : batch;  // 0: no batch axis, one program
    for (std::size_t i : model.value_indices)
        for (std::size_t k = 0; k < inputs[i].size(); ++k) {
            const double v = inputs[i].at_double(k);
            key.second.append(reinterpret_cast<const char*>(&v), sizeof v);
        }
    return key;
}

}  // namespace

BatchPlan Session::batch_plan(const std::vector<Tensor>& inputs) {
    return state_->model->batch_plan(program_key(*state_->model, inputs), inputs, threads());
}

std::vector<Tensor> Session::run(const std::vector<Tensor>& inputs) {
    Model::Shared& model = *state_->model;
    const Graph& g = model.graph;
    const ProgramKey key = program_key(model, inputs);
    const std::int64_t batch = key.first;
    // Whole, or slice by slice where batch_plan says the graph keeps samples apart (inputs and
    // outputs then have the batch first: a slice is a run of rows).
    std::int64_t slice = batch;
    if (batch >= 2 && model.batch_slice >= 0) {
        auto it = state_->slices.find(key);
        if (it == state_->slices.end() || it->second.first != model.batch_slice) {
            if (state_->slices.size() >= Model::kMaxValuePrograms) state_->slices.clear();
            it = state_->slices.insert_or_assign(key, std::make_pair(model.batch_slice, model.batch_plan(key, inputs, threads()).slice)).first;
        }
        slice = it->second.second;
    }
    std::vector<Tensor> out(g.outputs().size());
    const std::int64_t total = std::max<std::int64_t>(batch, 1), step = std::max<std::int64_t>(slice, 1);
    // Samples [first, first + n) of the batch on `arena`: inputs in, the program, outputs out.
    const auto run_slice = [&](std::int64_t first, std::int64_t n, Session::State::Arena& arena, cpu::ThreadPool* pool) {
        const bool whole = n == batch;
        const native::Program& p = *arena.program;
        for (std::size_t i = 0; i < inputs.size(); ++i) {
            const std::size_t row = whole ? 0 : inputs[i].size() / static_cast<std::size_t>(batch);
            to_carrier(inputs[i], g.inputs()[i]->dtype(), g.input_name(i), p.inputs()[i].get(arena.base),
                       row * static_cast<std::size_t>(first), whole ? inputs[i].size() : row * static_cast<std::size_t>(n));
        }
        if (state_->profiling)
            state_->run_profiled(p, arena.base);
        else
            p.run(arena.base, pool);
        for (std::size_t i = 0; i < p.outputs().size(); ++i) {
            const auto count = static_cast<std::size_t>(numel(p.output_shapes()[i]));
            from_carrier(p.outputs()[i].get(arena.base), out[i], whole ? 0 : count / static_cast<std::size_t>(n) * static_cast<std::size_t>(first), count);
        }
    };
    const auto slice_key = [&](std::int64_t n) { return ProgramKey{n == batch ? batch : n, key.second}; };
    {  // the outputs, whole, before any slice writes its rows
        const std::int64_t n = std::min(slice, batch);  // the first slice (0: no batch axis)
        const native::Program& p = *state_->arena(slice_key(n), inputs).program;
        for (std::size_t i = 0; i < p.outputs().size(); ++i) {
            Shape shape = p.output_shapes()[i];
            if (n != batch) shape[0] = batch;  // batch_mixing: every output has the batch first
            out[i] = Tensor(shape, g.outputs()[i]->dtype());
        }
    }
    // A sliced batch on several threads runs its slices side by side, each on one thread with an
    // arena of its own, rather than one slice at a time split over the threads: no hand-off
    // between the threads in every operator, and each thread's slice stays in its own core's
    // caches. MobileNet v2 at batch 32 in slices of 2 on 2 threads: 107-126 ms, against 132-137
    // one slice at a time (one thread: 222). Side by side, a slice's values are those a session
    // of one thread gives.
    const std::int64_t full = slice < batch ? total / step : 0;  // whole slices
    const int lanes = state_->profiling ? 1 : static_cast<int>(std::min<std::int64_t>(threads(), full));
    std::int64_t done = 0;
    if (lanes >= 2) {
        std::vector<Session::State::Arena*> arenas;
        for (int l = 0; l < lanes; ++l)
            arenas.push_back(l == 0 ? &state_->arena(slice_key(step), inputs) : &state_->lane_arena(slice_key(step), inputs, l));
        std::atomic<std::int64_t> next{0};
        std::vector<std::exception_ptr> errors(static_cast<std::size_t>(lanes));
        cpu::parallel_for(state_->thread_pool(), lanes, [&](std::int64_t l) {
            try {
                for (std::int64_t s; (s = next.fetch_add(1)) < full;) run_slice(s * step, step, *arenas[static_cast<std::size_t>(l)], nullptr);
            } catch (...) {
                errors[static_cast<std::size_t>(l)] = std::current_exception();
            }
        });
        for (const auto& e : errors)
            if (e) std::rethrow_exception(e);
        done = full * step;
    }
    for (std::int64_t first = done; first < total; first += step) {
        const std::int64_t n = std::min(slice, batch - first);
        run_slice(first, n, state_->arena(slice_key(n), inputs), state_->thread_pool());
    }
    return out;
}

std::map<std::string, Tensor> Session::run(const std::map<std::string, Tensor>& inputs) {
    const Graph& g = state_->model->graph;
    std::vector<Tensor> ordered;
    for (std::size_t i = 0; i < g.inputs().size(); ++i) {
        auto it = inputs.find(g.input_name(i));
        if (it == inputs.end()) throw ShapeError("input '" + g.input_name(i) + "' is missing");
        ordered.push_back(it->second);
    }
    for (const auto& [name, t] : inputs) {
        bool known = false;
        for (std::size_t i = 0; i < g.inputs().size(); ++i) known = known || g.input_name(i) == name;
        if (!known) throw ShapeError("the model has no input named '" + name + "'");
    }
    auto outs = run(ordered);
    std::map<std::string, Tensor> named;
    for (std::size_t i = 0; i < outs.size(); ++i) named.emplace(g.output_name(i), std::move(outs[i]));
    return named;
}

}  // namespace graft
