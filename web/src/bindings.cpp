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

/// Makes input `index` for the next run a tensor of dtype `dtype` (a graft::DType value) and shape
/// `shape[0..rank)`, and returns where its bytes go (the caller writes them there), or null on
/// failure (an unknown dtype, a negative or overflowing shape). The tensor is reused while the
/// dtype and shape stay the same.
EMSCRIPTEN_KEEPALIVE void* graft_web_input(void* handle, int index, int dtype, const std::int32_t* shape, int rank) {
    return guarded([&]() -> void* {
        auto* h = static_cast<Handle*>(handle);
        if (index < 0 || static_cast<std::size_t>(index) >= h->inputs.size())
            throw graft::ShapeError("input index " + std::to_string(index) + " is out of range: the model has " +
                                    std::to_string(h->inputs.size()) + " inputs");
        if (rank < 0 || rank > 32) throw graft::ShapeError("input rank " + std::to_string(rank) + " is not between 0 and 32");
        if (dtype < 0 || dtype >= static_cast<int>(std::size(graft::kAllDTypes)))
            throw graft::DTypeError("dtype code " + std::to_string(dtype) + " is not one graft knows");
        const graft::Shape s(shape, shape + rank);
        const auto t = static_cast<graft::DType>(dtype);
        graft::Tensor& slot = h->inputs[static_cast<std::size_t>(index)];
        if (slot.dtype() != t || slot.shape() != s || slot.shape().empty()) slot = graft::Tensor(s, t);  // checks the dimensions
        void* p = const_cast<void*>(bytes_of(slot));
        return p ? p : handle;  // no bytes to write: any non-null pointer
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

/// Output `index` of the last run: writes its dtype (a graft::DType value), rank and dimensions
/// to meta[0], meta[1] and meta[2..] (room for 34 values) and returns its bytes; null if there is
/// no such output.
EMSCRIPTEN_KEEPALIVE const void* graft_web_output(void* handle, int index, std::int32_t* meta) {
    auto* h = static_cast<Handle*>(handle);
    if (index < 0 || static_cast<std::size_t>(index) >= h->outputs.size()) return nullptr;
    const graft::Tensor& t = h->outputs[static_cast<std::size_t>(index)];
    if (t.shape().size() > 32) return nullptr;
    meta[0] = static_cast<std::int32_t>(t.dtype());
    meta[1] = static_cast<std::int32_t>(t.shape().size());
    for (std::size_t i = 0; i < t.shape().size(); ++i) meta[2 + i] = static_cast<std::int32_t>(t.shape()[i]);
    return bytes_of(t);
}

}  // extern "C"
