// The browser runtime's C entry points, called by web/js/graft.mjs (never by hand): a descriptor
// read from memory into a Model, inputs staged into its Session, outputs read back.
//
// Every entry point catches what graft throws: a failure returns 0 (or a null pointer) and leaves
// the error's kind and message for graft_web_error_kind() / graft_web_error(), which the
// JavaScript side turns into a GraftError with the same words the CLI prints. Nothing aborts.
#include <emscripten/emscripten.h>

#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "graft/backend/descriptor.hpp"
#include "graft/graft.hpp"
#include "graft/plugin_loader.hpp"
#include "graft/version.hpp"
#include "static_plugins.hpp"

namespace {

/// One loaded model: the Model, the Session its runs use (its working memory is kept between
/// runs), the inputs staged for the next run and the outputs of the last one.
struct Handle {
    graft::Model model;
    graft::Session session;
    std::vector<graft::Tensor> inputs;
    std::vector<graft::Tensor> outputs;
    std::string text;  // the last JSON handed out
};

/// The module's state: one per instance of the WebAssembly module (JavaScript loads one per
/// variant), used from the thread that called into it.
struct State {
    std::unique_ptr<graft::Registry> registry;
    std::string error, kind;
    std::string text;
};

State& state() {
    static State s;
    return s;
}

const graft::Registry& registry() {
    State& s = state();
    if (!s.registry) {
        auto r = graft::make_builtin_registry();
        for (graft_plugin_entry_fn entry : graft::web::static_plugins()) graft::register_static_plugin(entry, *r);
        s.registry = std::move(r);
    }
    return *s.registry;
}

template <class F>
auto guarded(F&& f) -> decltype(f()) {
    State& s = state();
    s.error.clear();
    s.kind.clear();
    try {
        return f();
    } catch (const graft::Error& e) {
        s.kind = e.kind();
        s.error = e.what();
    } catch (const std::bad_alloc&) {
        s.kind = "memory";
        s.error = "out of memory (the browser's WebAssembly memory is limited to 4 GiB)";
    } catch (const std::exception& e) {
        s.kind = "error";
        s.error = e.what();
    }
    return {};
}

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void write_value(Writer& w, const std::string& name, graft::DType dtype, const graft::Shape& shape) {
    w.StartObject();
    w.Key("name");
    w.String(name.c_str(), static_cast<rapidjson::SizeType>(name.size()));
    w.Key("dtype");
    w.String(graft::name_of(dtype));
    w.Key("shape");
    w.StartArray();
    for (auto d : shape) d == graft::kDynamic ? w.Null() : w.Int64(d);
    w.EndArray();
    w.EndObject();
}

/// A tensor's elements, whatever their dtype.
const void* bytes_of(const graft::Tensor& t) {
    switch (t.dtype()) {
        case graft::DType::float32: return t.data();
        case graft::DType::int32: return t.data<std::int32_t>();
        case graft::DType::int64: return t.data<std::int64_t>();
        case graft::DType::uint8: return t.data<std::uint8_t>();
        case graft::DType::uint16: return t.data<std::uint16_t>();
        case graft::DType::int8: return t.data<std::int8_t>();
        case graft::DType::boolean: return t.data<bool>();
    }
    return nullptr;
}

graft::DType dtype_named(const char* name) {
    return graft::dtype_from_name(name ? name : "");
}

}  // namespace

extern "C" {

/// The message and kind ("format", "unsupported", "shape", ...) of the last failure.
EMSCRIPTEN_KEEPALIVE const char* graft_web_error() { return state().error.c_str(); }
EMSCRIPTEN_KEEPALIVE const char* graft_web_error_kind() { return state().kind.c_str(); }

/// What this build is: {"version", "threads" (built with threads), "max_threads" (its worker
/// pool), "simd", "plugins"}.
EMSCRIPTEN_KEEPALIVE const char* graft_web_build_info() {
    return guarded([]() -> const char* {
        rapidjson::StringBuffer sb;
        Writer w(sb);
        w.StartObject();
        w.Key("version");
        w.String(graft::version_string());
        w.Key("threads");
#if defined(__EMSCRIPTEN_PTHREADS__)
        w.Bool(true);
#else
        w.Bool(false);
#endif
        w.Key("max_threads");
        w.Int(GRAFT_WEB_MAX_THREADS);
        w.Key("simd");
#if defined(__wasm_simd128__)
        w.Bool(true);
#else
        w.Bool(false);
#endif
        w.Key("plugins");
        w.StartArray();
        for (const auto& p : registry().plugins()) w.String(p.name.c_str());
        w.EndArray();
        w.EndObject();
        state().text = sb.GetString();
        return state().text.c_str();
    });
}

/// Reads a descriptor (graph.json's text, weights.bin's bytes) and prepares it to run with
/// `threads` intra-op threads at optimizer level `opt_level`. Null on failure.
EMSCRIPTEN_KEEPALIVE void* graft_web_load(const char* json, std::size_t json_bytes, const void* weights, std::size_t weight_bytes,
                                          const char* name, int threads, int opt_level) {
    return guarded([&]() -> void* {
        const graft::Registry& reg = registry();
        graft::Graph g = graft::descriptor::read_memory(std::string(json, json_bytes), weights, weight_bytes, reg,
                                                        name ? name : "descriptor");
        graft::Model model(std::move(g), reg, opt_level);
        model.set_threads(threads < 1 ? 1 : threads);
        graft::Session session = model.session();
        auto* h = new Handle{std::move(model), std::move(session), {}, {}, {}};
        h->inputs.resize(h->model.num_inputs());
        return h;
    });
}

EMSCRIPTEN_KEEPALIVE void graft_web_free(void* handle) { delete static_cast<Handle*>(handle); }

/// The model's signature: {"inputs": [{name, dtype, shape}], "outputs": [...], "threads"}; a
/// null dimension is the free batch.
EMSCRIPTEN_KEEPALIVE const char* graft_web_signature(void* handle) {
    return guarded([&]() -> const char* {
        auto* h = static_cast<Handle*>(handle);
        rapidjson::StringBuffer sb;
        Writer w(sb);
        w.StartObject();
        w.Key("inputs");
        w.StartArray();
        for (std::size_t i = 0; i < h->model.num_inputs(); ++i)
            write_value(w, h->model.input_name(i), h->model.input_dtype(i), h->model.input_shape(i));
        w.EndArray();
        w.Key("outputs");
        w.StartArray();
        for (std::size_t i = 0; i < h->model.num_outputs(); ++i)
            write_value(w, h->model.output_name(i), h->model.output_dtype(i), h->model.output_shape(i));
        w.EndArray();
        w.Key("threads");
        w.Int(h->session.threads());
        w.EndObject();
        h->text = sb.GetString();
        return h->text.c_str();
    });
}

/// Stages input `index` for the next run: `bytes` bytes of `dtype` values in C order, of shape
/// `shape[0..rank)`. Returns 1, or 0 on failure (a size that does not match the shape, say).
EMSCRIPTEN_KEEPALIVE int graft_web_set_input(void* handle, int index, const char* dtype, const std::int32_t* shape, int rank,
                                             const void* data, std::size_t bytes) {
    return guarded([&]() -> int {
        auto* h = static_cast<Handle*>(handle);
        if (index < 0 || static_cast<std::size_t>(index) >= h->inputs.size())
            throw graft::ShapeError("input index " + std::to_string(index) + " is out of range: the model has " +
                                    std::to_string(h->inputs.size()) + " inputs");
        if (rank < 0 || rank > 32) throw graft::ShapeError("input rank " + std::to_string(rank) + " is not between 0 and 32");
        graft::Shape s(shape, shape + rank);
        graft::Tensor t(s, dtype_named(dtype));  // zeros; checks the dimensions
        const std::size_t want = t.size() * graft::size_of(t.dtype());
        if (bytes != want)
            throw graft::ShapeError("input '" + h->model.input_name(static_cast<std::size_t>(index)) + "': " +
                                    std::to_string(bytes) + " bytes of " + graft::name_of(t.dtype()) + " given, shape " +
                                    graft::shape_str(s) + " needs " + std::to_string(want));
        if (bytes) std::memcpy(const_cast<void*>(bytes_of(t)), data, bytes);
        h->inputs[static_cast<std::size_t>(index)] = std::move(t);
        return 1;
    });
}

/// Runs the model on the staged inputs. Returns the number of outputs, or -1 on failure.
EMSCRIPTEN_KEEPALIVE int graft_web_run(void* handle) {
    auto* h = static_cast<Handle*>(handle);
    const int n = guarded([&]() -> int {
        h->outputs = h->session.run(h->inputs);
        return static_cast<int>(h->outputs.size()) + 1;
    });
    return n - 1;
}

/// The last run's outputs: [{name, dtype, shape}], and output i's bytes.
EMSCRIPTEN_KEEPALIVE const char* graft_web_outputs(void* handle) {
    return guarded([&]() -> const char* {
        auto* h = static_cast<Handle*>(handle);
        rapidjson::StringBuffer sb;
        Writer w(sb);
        w.StartArray();
        for (std::size_t i = 0; i < h->outputs.size(); ++i)
            write_value(w, h->model.output_name(i), h->outputs[i].dtype(), h->outputs[i].shape());
        w.EndArray();
        h->text = sb.GetString();
        return h->text.c_str();
    });
}

EMSCRIPTEN_KEEPALIVE const void* graft_web_output_data(void* handle, int index) {
    auto* h = static_cast<Handle*>(handle);
    if (index < 0 || static_cast<std::size_t>(index) >= h->outputs.size()) return nullptr;
    return bytes_of(h->outputs[static_cast<std::size_t>(index)]);
}

}  // extern "C"
