// The descriptor writer: graph.json (RapidJSON, fixed key order) and weights.bin, written as one
// set (graft/backend/output_set.hpp).
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <system_error>
#include <variant>

#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include "backend/descriptor/common.hpp"
#include "graft/backend/descriptor.hpp"
#include "graft/backend/output_set.hpp"
#include "graft/optimize/passes.hpp"
#include "graft/version.hpp"
#include "optimize/at_batch1.hpp"

namespace fs = std::filesystem;

namespace graft::descriptor {

namespace {

using Writer = rapidjson::PrettyWriter<rapidjson::StringBuffer>;

void put(Writer& w, bool v) { w.Bool(v); }
void put(Writer& w, std::int64_t v) { w.Int64(v); }
void put(Writer& w, std::uint64_t v) { w.Uint64(v); }
void put(Writer& w, double v) {
    // Finite doubles: RapidJSON's Grisu2 output, which parses back (kParseFullPrecisionFlag) to
    // the same bits. Non-finite ones as kParseNanAndInfFlag reads them.
    if (std::isfinite(v)) w.Double(v);
    else if (std::isnan(v)) w.RawValue("NaN", 3, rapidjson::kNumberType);
    else if (v > 0) w.RawValue("Infinity", 8, rapidjson::kNumberType);
    else w.RawValue("-Infinity", 9, rapidjson::kNumberType);
}
void put(Writer& w, const std::string& v) { w.String(v.data(), static_cast<rapidjson::SizeType>(v.size())); }
void put(Writer& w, const char* v) { w.String(v); }
template <class T>
void put(Writer& w, const std::vector<T>& v) {
    w.StartArray();
    for (const auto& x : v) put(w, x);
    w.EndArray();
}
template <class T>
void field(Writer& w, const char* key, const T& value) {
    w.Key(key);
    put(w, value);
}

/// key: [{...}, ...], one object per item, its fields written by fields(item).
template <class Items, class Fields>
void put_objects(Writer& w, const char* key, const Items& items, Fields fields) {
    w.Key(key);
    w.StartArray();
    for (const auto& item : items) {
        w.StartObject();
        fields(item);
        w.EndObject();
    }
    w.EndArray();
}

void put_shape(Writer& w, const Shape& s) {
    w.StartArray();
    for (auto d : s) {
        if (d == kDynamic) w.String("?");
        else w.Int64(d);
    }
    w.EndArray();
}

void put_named(Writer& w, const char* key, const NamedVars& vars) {
    w.Key(key);
    w.StartObject();
    for (const auto& [n, v] : vars) {
        put(w, n);
        put(w, v->name());
    }
    w.EndObject();
}

struct ConstantPlace {
    std::uint64_t offset, bytes;
};

/// The weights file's bytes and where each constant went.
std::string pack_weights(const Graph& g, std::map<const Variable*, ConstantPlace>& places) {
    std::string bin;
    for (const Variable* v : g.variables()) {
        if (!v->is_constant()) continue;
        const auto& d = static_cast<const ConstantVariable*>(v)->data();
        bin.resize((bin.size() + detail::kAlign - 1) / detail::kAlign * detail::kAlign, '\0');
        const std::size_t at = bin.size(), n = d.size() * sizeof(float);
        bin.resize(at + n);
        if (n) std::memcpy(&bin[at], d.data(), n);
        if (!detail::little_endian())
            for (std::size_t i = at; i + 4 <= at + n; i += 4) std::swap(bin[i], bin[i + 3]), std::swap(bin[i + 1], bin[i + 2]);
        places[v] = {at, n};
    }
    return bin;
}

void put_memory_plan(Writer& w, const Graph& g, const Registry& reg) {
    // Informational: the plan at batch 1. A graph with other free sizes has none until it runs.
    if (has_free_sizes(g)) return;
    const Graph c = optimize::clone_at_batch1(g, reg);
    const auto plan = optimize::plan_memory(c, reg);
    w.Key("memory_plan");
    w.StartObject();
    field(w, "batch", std::int64_t{1});
    field(w, "arena_bytes", std::uint64_t{plan.arena_bytes});
    field(w, "naive_bytes", std::uint64_t{plan.naive_bytes});
    field(w, "inplace", std::uint64_t{plan.inplace});
    field(w, "aliased", std::uint64_t{plan.aliased});
    w.Key("offsets");
    w.StartObject();
    for (const Variable* v : c.variables()) {
        auto it = plan.offset.find(v);
        if (it == plan.offset.end()) continue;
        put(w, v->name());
        w.Uint64(it->second);
    }
    w.EndObject();
    w.EndObject();
}

void put_plugins(Writer& w, const Graph& g, const Registry& reg) {
    // Keyed by the plugin's own name (its PluginRecord) when the registry knows it, else by the
    // handler owner's name (a registry filled without the plugin loader).
    struct Info {
        std::string version, file;
        std::set<std::string> types;
    };
    std::map<std::string, Info> by_plugin;
    for (const Operator* op : g.operators()) {
        const auto* e = reg.ops().find(op->type());
        if (!e) throw UnsupportedError("cannot write a descriptor: " + op->describe() + " has no registered schema");
        if (e->owner.name == HandlerOwner{}.name) continue;
        const PluginRecord* rec = nullptr;
        for (const auto& p : reg.plugins())
            if (e->owner.keepalive && p.keepalive == e->owner.keepalive) rec = &p;
        Info& info = by_plugin[rec ? rec->name : e->owner.name];
        if (rec) info.version = rec->version, info.file = fs::path(rec->file).filename().string();
        info.types.insert(op->type());
    }
    put_objects(w, "plugins", by_plugin, [&](const auto& plugin) {
        const auto& [name, info] = plugin;
        field(w, "name", name);
        if (!info.version.empty()) field(w, "version", info.version);
        if (!info.file.empty()) field(w, "file", info.file);
        field(w, "op_types", std::vector<std::string>(info.types.begin(), info.types.end()));
    });
}

std::string graph_json(const Graph& g, const Registry& reg, const std::map<const Variable*, ConstantPlace>& places,
                       const std::string& bin) {
    rapidjson::StringBuffer buf;
    Writer w(buf);
    w.SetIndent(' ', 1);
    w.StartObject();
    field(w, "format", detail::kFormatName);
    field(w, "format_version", std::int64_t{kFormatVersion});
    field(w, "graft_version", version_string());
    w.Key("weights");
    w.StartObject();
    field(w, "file", detail::kWeightsFile);
    field(w, "bytes", std::uint64_t{bin.size()});
    field(w, "alignment", std::uint64_t{detail::kAlign});
    field(w, "byte_order", "little");
    field(w, "checksum", "crc32");
    field(w, "crc32", std::uint64_t{detail::crc32_of(reinterpret_cast<const unsigned char*>(bin.data()), bin.size())});
    w.EndObject();
    put_plugins(w, g, reg);
    for (const bool inputs : {true, false}) {
        std::size_t i = 0;
        put_objects(w, inputs ? "inputs" : "outputs", inputs ? g.inputs() : g.outputs(), [&](const Variable* v) {
            field(w, "name", inputs ? g.input_name(i) : g.output_name(i));
            field(w, "variable", v->name());
            field(w, "dtype", name_of(v->dtype()));  // also in "variables": here for a reader's convenience
            ++i;
        });
    }
    put_objects(w, "variables", g.variables(), [&](const Variable* v) {
        field(w, "name", v->name());
        field(w, "dtype", name_of(v->dtype()));
        field(w, "order", v->order().names());
        w.Key("shape");
        put_shape(w, v->shape());
        if (v->is_constant()) {
            const auto& p = places.at(v);
            field(w, "offset", p.offset);
            field(w, "bytes", p.bytes);
        }
    });
    put_objects(w, "operators", g.topological_order(), [&](const Operator* op) {
        field(w, "type", op->type());
        field(w, "name", op->name());
        field(w, "layer", op->layer());
        put_named(w, "inputs", op->inputs());
        put_named(w, "outputs", op->outputs());
        w.Key("attributes");
        w.StartObject();
        for (const auto& [key, value] : op->attrs().all()) {
            put(w, key);
            w.StartObject();
            w.Key(detail::kAttrTags[value.index()]);
            std::visit([&](const auto& x) { put(w, x); }, value);
            w.EndObject();
        }
        w.EndObject();
    });
    put_memory_plan(w, g, reg);
    w.EndObject();
    return std::string(buf.GetString(), buf.GetSize()) + "\n";
}

}  // namespace

bool is_descriptor(const std::string& path) {
    std::error_code ec;
    return fs::is_directory(path, ec) && fs::is_regular_file(fs::path(path) / detail::kGraphFile, ec);
}

void write(const Graph& g, const Registry& reg, const std::string& dir) {
    g.validate();
    std::map<const Variable*, ConstantPlace> places;
    const std::string bin = pack_weights(g, places);
    const std::string json = graph_json(g, reg, places, bin);

    // graph.json and weights.bin appear together or not at all; an existing descriptor is replaced.
    write_output_set(dir, {{detail::kWeightsFile, bin}, {detail::kGraphFile, json}}, {detail::kGraphFile, detail::kWeightsFile},
                     "a descriptor");
}

}  // namespace graft::descriptor
