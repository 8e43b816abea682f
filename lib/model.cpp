// The host API: Model (a converted graph, compiled per batch size on first use) and Session
// (working memory for runs).
#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "backend/native/program.hpp"
#include "cpu/threadpool.hpp"
#include "graft/backend/descriptor.hpp"
#include "graft/frontend/keras.hpp"
#include "graft/frontend/onnx.hpp"
#include "graft/graft.hpp"
#include "graft/optimize/passes.hpp"

namespace graft {

struct Model::Shared {
    // First, so destroyed last: the plugin libraries of the registry the model was made with.
    // The graph may hold objects a plugin created (variables, constants' data) and compiled
    // programs hold its kernels, so their code must stay loaded as long as the model lives.
    std::vector<std::shared_ptr<const void>> plugin_libraries;
    Graph graph;
    const Registry* registry = nullptr;
    std::mutex mutex;                                                          // guards programs
    std::map<std::int64_t, std::shared_ptr<const native::Program>> programs;  // by batch size
    std::mutex run_mutex;                                                      // serializes Model::run
    std::unique_ptr<Session> session;                                         // Model::run's session
    int threads = 1;                                                           // for new sessions

    Session& default_session();

    std::shared_ptr<const native::Program> program(std::int64_t batch) {
        std::lock_guard<std::mutex> lock(mutex);
        auto it = programs.find(batch);
        if (it != programs.end()) return it->second;
        Graph g = graph.clone();
        for (Variable* v : g.inputs()) {
            Shape s = v->shape();
            if (auto n = v->order().find(Axis::N); n && s[*n] == kDynamic) s[*n] = batch;
            v->set_type(v->order(), s);
        }
        infer_shapes(g, *registry);
        auto p = native::Program::compile(std::move(g), *registry);
        programs.emplace(batch, p);
        return p;
    }
};

struct Session::State {
    std::shared_ptr<Model::Shared> model;
    struct Arena {
        std::shared_ptr<const native::Program> program;
        std::unique_ptr<float[]> memory;  // new[] of float is 16-byte aligned; we align by hand
        std::byte* base = nullptr;
    };
    std::map<std::int64_t, Arena> arenas;
    int threads = 1;
    std::unique_ptr<cpu::ThreadPool> pool;  // created on the first run when threads != 1

    cpu::ThreadPool* thread_pool() {
        if (!pool && threads != 1) pool = std::make_unique<cpu::ThreadPool>(threads);
        return pool.get();
    }

    Arena& arena(std::int64_t batch) {
        auto it = arenas.find(batch);
        if (it != arenas.end()) return it->second;
        Arena a;
        a.program = model->program(batch);
        const std::size_t floats = a.program->arena_bytes() / sizeof(float) + 64 / sizeof(float);
        a.memory.reset(new float[floats]());
        auto addr = reinterpret_cast<std::uintptr_t>(a.memory.get());
        a.base = reinterpret_cast<std::byte*>((addr + 63) / 64 * 64);
        return arenas.emplace(batch, std::move(a)).first->second;
    }
};

Session& Model::Shared::default_session() {
    // Non-owning: this session lives inside Shared, so owning Shared would be a cycle.
    if (!session) session.reset(new Session(std::make_unique<Session::State>(Session::State{std::shared_ptr<Shared>(std::shared_ptr<Shared>{}, this), {}, threads, nullptr})));
    return *session;
}

Model::Model(Graph graph, const Registry& registry, int opt_level) : shared_(std::make_shared<Shared>()) {
    shared_->registry = &registry;
    for (const auto& p : registry.plugins()) shared_->plugin_libraries.push_back(p.keepalive);
    graph.validate();
    optimize::pipeline_for(opt_level, "native").run(graph, registry);  // ends with legalize_layout
    shared_->graph = std::move(graph);
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

Session Model::session() const {
    return Session(std::make_unique<Session::State>(Session::State{shared_, {}, shared_->threads, nullptr}));
}

void Model::set_threads(int threads) {
    if (threads < 0) throw Error("threads must be >= 0 (0: one per core), got " + std::to_string(threads));
    shared_->threads = threads;
}
int Model::threads() const { return shared_->threads; }

int Session::threads() const {
    return state_->threads == 0 ? cpu::ThreadPool::hardware_threads() : state_->threads;
}
std::size_t Session::arena_bytes() const {
    std::size_t n = 0;
    for (const auto& [batch, a] : state_->arenas) n += a.program->arena_bytes();
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

Session::Session(std::unique_ptr<State> s) : state_(std::move(s)) {}
Session::~Session() = default;
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;

std::vector<Tensor> Session::run(const std::vector<Tensor>& inputs) {
    const Graph& g = state_->model->graph;
    if (inputs.size() != g.inputs().size())
        throw ShapeError("the model takes " + std::to_string(g.inputs().size()) + " inputs, got " + std::to_string(inputs.size()));
    std::int64_t batch = -1;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const Shape& want = g.inputs()[i]->shape();
        const Shape& got = inputs[i].shape();
        bool ok = got.size() == want.size();
        for (std::size_t d = 0; ok && d < want.size(); ++d) ok = want[d] == kDynamic ? got[d] >= 1 : got[d] == want[d];
        if (!ok)
            throw ShapeError("input '" + g.input_name(i) + "' has shape " + shape_str(got) + ", expected " + shape_str(want) +
                             " (? is the batch, any size)");
        // The batch is the size given for the dynamic dimension (inputs with fixed sizes only have none).
        for (std::size_t d = 0; d < want.size(); ++d) {
            if (want[d] != kDynamic) continue;
            if (batch == -1) batch = got[d];
            else if (got[d] != batch)
                throw ShapeError("input '" + g.input_name(i) + "' has batch " + std::to_string(got[d]) + ", the other inputs have " +
                                 std::to_string(batch));
        }
    }
    if (batch == -1) batch = 0;  // no dynamic dimension: one program
    auto& arena = state_->arena(batch);
    const native::Program& p = *arena.program;
    for (std::size_t i = 0; i < inputs.size(); ++i)
        std::memcpy(p.inputs()[i].get(arena.base), inputs[i].data(), inputs[i].size() * sizeof(float));
    p.run(arena.base, state_->thread_pool());
    std::vector<Tensor> out;
    out.reserve(p.outputs().size());
    for (std::size_t i = 0; i < p.outputs().size(); ++i) {
        Tensor t(p.output_shapes()[i]);
        std::memcpy(t.data(), p.outputs()[i].get(arena.base), t.size() * sizeof(float));
        out.push_back(std::move(t));
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

Model load(const std::string& path, const LoadOptions& options) {
    const Registry& reg = options.registry ? *options.registry : default_registry();
    if (descriptor::is_descriptor(path)) {
        Model model(descriptor::read(path, reg), reg, options.opt_level);
        model.set_threads(options.threads);
        return model;
    }
    if (onnx::is_onnx_path(path)) {
        Model model(onnx::convert(path, reg), reg, options.opt_level);
        model.set_threads(options.threads);
        return model;
    }
    keras::Options ko;
    ko.weights_path = options.weights_path;
    Model model(keras::convert(path, reg, ko), reg, options.opt_level);
    model.set_threads(options.threads);
    return model;
}

}  // namespace graft
