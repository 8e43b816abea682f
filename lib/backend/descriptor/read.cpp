// The descriptor reader: graph.json validated field by field, weights.bin mapped (POSIX mmap),
// checked against its recorded size and CRC-32, and each constant copied out of the mapping.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <set>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include "backend/descriptor/common.hpp"
#include "graft/backend/descriptor.hpp"
#include "graft/version.hpp"
#include "json_depth.hpp"

namespace fs = std::filesystem;

namespace graft::descriptor {

namespace {

using Value = rapidjson::Value;

/// Read-only mapping of a whole file; empty files map to nothing.
class Mapping {
public:
    explicit Mapping(const std::string& path) : path_(path) {
        fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd_ < 0) throw IOError("cannot open " + path + ": " + std::generic_category().message(errno));
        struct stat st {};
        if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
            ::close(fd_);
            throw FormatError(path + " is not a regular file");
        }
        size_ = static_cast<std::size_t>(st.st_size);
        if (size_ > 0) {
            void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd_, 0);
            if (p == MAP_FAILED) {
                ::close(fd_);
                throw IOError("cannot map " + path + ": " + std::generic_category().message(errno));
            }
            data_ = static_cast<const unsigned char*>(p);
        }
    }
    ~Mapping() {
        if (data_) ::munmap(const_cast<unsigned char*>(data_), size_);
        if (fd_ >= 0) ::close(fd_);
    }
    Mapping(const Mapping&) = delete;
    Mapping& operator=(const Mapping&) = delete;
    const unsigned char* data() const noexcept { return data_; }
    std::size_t size() const noexcept { return size_; }

private:
    std::string path_;
    int fd_ = -1;
    const unsigned char* data_ = nullptr;
    std::size_t size_ = 0;
};

/// Field access that fails with a FormatError naming the file and where in it.
class Reader {
public:
    explicit Reader(std::string file) : file_(std::move(file)) {}

    [[noreturn]] void fail(const std::string& where, const std::string& msg) const {
        throw FormatError(file_ + ": " + where + ": " + msg);
    }
    const Value& member(const Value& obj, const char* key, const std::string& where) const {
        if (!obj.IsObject()) fail(where, "expected an object");
        auto it = obj.FindMember(key);
        if (it == obj.MemberEnd()) fail(where, std::string("missing '") + key + "'");
        return it->value;
    }
    std::string str(const Value& obj, const char* key, const std::string& where) const {
        const Value& v = member(obj, key, where);
        if (!v.IsString()) fail(where, std::string("'") + key + "' should be a string");
        return {v.GetString(), v.GetStringLength()};
    }
    std::uint64_t u64(const Value& obj, const char* key, const std::string& where) const {
        const Value& v = member(obj, key, where);
        if (!v.IsUint64()) fail(where, std::string("'") + key + "' should be a non-negative integer");
        return v.GetUint64();
    }
    const Value& array(const Value& obj, const char* key, const std::string& where) const {
        const Value& v = member(obj, key, where);
        if (!v.IsArray()) fail(where, std::string("'") + key + "' should be an array");
        return v;
    }
    std::vector<std::string> strings(const Value& v, const std::string& where) const {
        if (!v.IsArray()) fail(where, "expected an array of strings");
        std::vector<std::string> out;
        for (const auto& s : v.GetArray()) {
            if (!s.IsString()) fail(where, "expected an array of strings");
            out.emplace_back(s.GetString(), s.GetStringLength());
        }
        return out;
    }
    const std::string& file() const noexcept { return file_; }

private:
    std::string file_;
};

AttrValue read_attr(const Reader& r, const Value& v, const std::string& where) {
    if (!v.IsObject() || v.MemberCount() != 1) r.fail(where, "an attribute should be an object {type: value}");
    const std::string tag = v.MemberBegin()->name.GetString();
    const Value& x = v.MemberBegin()->value;
    auto bad = [&]() -> AttrValue { r.fail(where, "attribute of type '" + tag + "' has a value of another type"); };
    auto list = [&](auto check, auto get) {
        using T = decltype(get(x));
        std::vector<T> out;
        if (!x.IsArray()) bad();
        for (const auto& e : x.GetArray()) {
            if (!check(e)) bad();
            out.push_back(get(e));
        }
        return out;
    };
    if (tag == "bool") return x.IsBool() ? AttrValue(x.GetBool()) : bad();
    if (tag == "int") return x.IsInt64() ? AttrValue(std::int64_t{x.GetInt64()}) : bad();
    if (tag == "float") return x.IsNumber() ? AttrValue(x.GetDouble()) : bad();
    if (tag == "string") return x.IsString() ? AttrValue(std::string(x.GetString(), x.GetStringLength())) : bad();
    if (tag == "ints")
        return list([](const Value& e) { return e.IsInt64(); }, [](const Value& e) { return std::int64_t{e.GetInt64()}; });
    if (tag == "floats") return list([](const Value& e) { return e.IsNumber(); }, [](const Value& e) { return e.GetDouble(); });
    if (tag == "strings")
        return list([](const Value& e) { return e.IsString(); },
                    [](const Value& e) { return std::string(e.GetString(), e.GetStringLength()); });
    r.fail(where, "unknown attribute type '" + tag + "'");
}

Shape read_shape(const Reader& r, const Value& v, const std::string& where) {
    if (!v.IsArray()) r.fail(where, "'shape' should be an array");
    Shape s;
    for (const auto& d : v.GetArray()) {
        if (d.IsString() && std::string(d.GetString()) == "?") s.push_back(kDynamic);
        else if (d.IsInt64() && d.GetInt64() >= 0) s.push_back(d.GetInt64());
        else r.fail(where, "a dimension should be a non-negative integer or \"?\"");
    }
    // The element count must not overflow (a wrapped count could pass the size checks).
    constexpr std::int64_t kMaxElements = std::int64_t{1} << 48;
    std::int64_t n = 1;
    for (auto d : s)
        if (d != kDynamic && d != 0 && (d > kMaxElements || n > kMaxElements / d))
            r.fail(where, "shape " + shape_str(s) + " has more than 2^48 elements");
        else if (d != kDynamic)
            n *= d;
    return s;
}

/// A descriptor's two parts in memory: graph.json's text and weights.bin's bytes, with the names
/// its messages use for them.
struct Parts {
    const std::string& text;
    const std::string& json_path;
    const unsigned char* bin;
    std::size_t bin_size;
    const std::string& bin_path;
};

Graph parse(const Parts& in, const Registry& reg) {
    const std::string& text = in.text;
    const std::string& json_path = in.json_path;
    const std::string& bin_path = in.bin_path;
    struct {
        const unsigned char* p;
        std::size_t n;
        const unsigned char* data() const noexcept { return p; }
        std::size_t size() const noexcept { return n; }
    } const bin{in.bin, in.bin_size};
    check_json_depth(text, json_path);
    rapidjson::Document doc;
    doc.Parse<rapidjson::kParseFullPrecisionFlag | rapidjson::kParseNanAndInfFlag>(text.c_str(), text.size());
    if (doc.HasParseError())
        throw FormatError(json_path + ": not valid JSON at offset " + std::to_string(doc.GetErrorOffset()) + ": " +
                          rapidjson::GetParseError_En(doc.GetParseError()));
    const Reader r(json_path);
    if (!doc.IsObject()) r.fail("top level", "expected an object");
    if (r.str(doc, "format", "top level") != detail::kFormatName) r.fail("top level", "'format' is not graft-descriptor");
    const Value& fv = r.member(doc, "format_version", "top level");
    if (!fv.IsInt() || fv.GetInt() != kFormatVersion)
        throw VersionError(json_path + ": format version " +
                           (fv.IsInt() ? std::to_string(fv.GetInt()) : std::string("(not an integer)")) +
                           " is not supported; this graft (" + version_string() + ") reads version " +
                           std::to_string(kFormatVersion));

    // weights.bin: size and checksum first, then every constant's range.
    const Value& wj = r.member(doc, "weights", "top level");
    const std::string wfile = r.str(wj, "file", "weights");
    if (wfile != detail::kWeightsFile) r.fail("weights", "'file' should be weights.bin, found '" + wfile + "'");
    if (r.str(wj, "byte_order", "weights") != "little") r.fail("weights", "'byte_order' should be little");
    if (r.str(wj, "checksum", "weights") != "crc32") r.fail("weights", "'checksum' should be crc32");
    const std::uint64_t want_bytes = r.u64(wj, "bytes", "weights");
    if (bin.size() != want_bytes)
        throw ChecksumError(bin_path + " has " + std::to_string(bin.size()) + " bytes, " + json_path + " records " +
                            std::to_string(want_bytes));
    const std::uint64_t want_crc = r.u64(wj, "crc32", "weights");
    const std::uint32_t crc = detail::crc32_of(bin.data(), bin.size());
    if (crc != want_crc)
        throw ChecksumError(bin_path + ": CRC-32 is " + std::to_string(crc) + ", " + json_path + " records " +
                            std::to_string(want_crc) + " (the file is corrupt or belongs to another graph.json)");

    // Which plugin provides which op type (for the error when one is missing): its name, and the
    // words naming it, "plugin 'channel_swish' (libgraft_channel_swish.so)". A registry filled
    // without the plugin loader records its handlers' owner name, which may read "plugin '...'"
    // already: it is not wrapped twice.
    struct Provider {
        std::string name, label;
    };
    std::map<std::string, Provider> plugin_of;
    for (const auto& p : r.array(doc, "plugins", "top level").GetArray()) {
        const std::string name = r.str(p, "name", "plugins");
        std::string label = name.rfind("plugin '", 0) == 0 ? name : "plugin '" + name + "'";
        const std::string where = label;
        if (p.IsObject() && p.HasMember("file") && p["file"].IsString()) label += " (" + std::string(p["file"].GetString()) + ")";
        for (const auto& t : r.strings(r.member(p, "op_types", where), where)) plugin_of[t] = {name, label};
    }

    Graph g;
    std::map<std::string, Variable*> vars;
    for (const auto& vj : r.array(doc, "variables", "top level").GetArray()) {
        const std::string name = r.str(vj, "name", "variables");
        const std::string where = "variable '" + name + "'";
        const DType dtype = [&] {
            try {
                // Descriptors before graft 0.2 may leave it out: every value was float32.
                return vj.IsObject() && !vj.HasMember("dtype") ? DType::float32 : dtype_from_name(r.str(vj, "dtype", where));
            } catch (const FormatError& e) {
                r.fail(where, e.what());
            }
        }();
        Order order;
        try {
            order = Order::from_names(r.strings(r.member(vj, "order", where), where));
        } catch (const GraphError& e) {
            r.fail(where, e.what());
        }
        const Shape shape = read_shape(r, r.member(vj, "shape", where), where);
        if (shape.size() != order.ndim()) r.fail(where, "order " + order.str() + " and shape " + shape_str(shape) + " differ in rank");
        if (vars.count(name)) r.fail(where, "a second variable of this name");
        if (!vj.HasMember("offset")) {
            vars[name] = g.add_variable(name, dtype, order, shape);
            continue;
        }
        const std::uint64_t offset = r.u64(vj, "offset", where), bytes = r.u64(vj, "bytes", where);
        const std::int64_t n = numel(shape);
        if (dtype != DType::float32 || n < 0) r.fail(where, "a constant must be float32 with a fixed shape");
        if (static_cast<std::uint64_t>(n) > std::numeric_limits<std::uint64_t>::max() / 4 || bytes != static_cast<std::uint64_t>(n) * 4)
            throw RangeError(json_path + ": " + where + " " + shape_str(shape) + " needs " + std::to_string(n) +
                             " float32 values but records " + std::to_string(bytes) + " bytes");
        if (offset % detail::kAlign != 0)
            throw RangeError(json_path + ": " + where + ": offset " + std::to_string(offset) + " is not " +
                             std::to_string(detail::kAlign) + "-byte aligned");
        if (offset > bin.size() || bytes > bin.size() - offset)
            throw RangeError(json_path + ": " + where + ": bytes [" + std::to_string(offset) + ", " +
                             std::to_string(offset) + " + " + std::to_string(bytes) + ") lie outside " + bin_path + " (" +
                             std::to_string(bin.size()) + " bytes)");
        auto data = std::make_shared<std::vector<float>>(static_cast<std::size_t>(n));
        if (bytes) std::memcpy(data->data(), bin.data() + offset, bytes);
        if (!detail::little_endian())
            for (auto& f : *data) {
                unsigned char b[4];
                std::memcpy(b, &f, 4);
                std::swap(b[0], b[3]), std::swap(b[1], b[2]);
                std::memcpy(&f, b, 4);
            }
        vars[name] = g.add_constant(name, order, shape, std::move(data));
    }
    auto var = [&](const std::string& name, const std::string& where) {
        auto it = vars.find(name);
        if (it == vars.end()) r.fail(where, "refers to unknown variable '" + name + "'");
        return it->second;
    };

    std::vector<std::string> input_names, output_names;
    for (const auto& p : r.array(doc, "inputs", "top level").GetArray()) {
        g.add_input(var(r.str(p, "variable", "inputs"), "inputs"));
        input_names.push_back(r.str(p, "name", "inputs"));
    }
    for (const auto& p : r.array(doc, "outputs", "top level").GetArray()) {
        g.add_output(var(r.str(p, "variable", "outputs"), "outputs"));
        output_names.push_back(r.str(p, "name", "outputs"));
    }
    g.set_input_names(std::move(input_names));
    g.set_output_names(std::move(output_names));

    std::map<const Operator*, std::vector<std::pair<std::string, TensorType>>> declared;
    for (const auto& oj : r.array(doc, "operators", "top level").GetArray()) {
        const std::string name = r.str(oj, "name", "operators");
        const std::string type = r.str(oj, "type", "operator '" + name + "'");
        const std::string where = type + " '" + name + "'";
        if (!reg.find_op(type)) {
            auto it = plugin_of.find(type);
            const bool known = it != plugin_of.end();
            throw UnknownOpError(json_path + ": " + where + ": unknown op type '" + type + "'" +
                                     (known ? "; it comes from " + it->second.label + ": load it (--plugin)"
                                            : std::string(" (no plugin is recorded for it)")),
                                 type, known ? it->second.name : "");
        }
        NamedVars ins, outs;
        std::set<std::string> seen;
        for (int io = 0; io < 2; ++io) {
            const Value& m = r.member(oj, io == 0 ? "inputs" : "outputs", where);
            if (!m.IsObject()) r.fail(where, "inputs and outputs should be objects");
            seen.clear();
            for (const auto& kv : m.GetObject()) {
                const std::string port = kv.name.GetString();
                if (!kv.value.IsString()) r.fail(where, "port '" + port + "' should name a variable");
                if (!seen.insert(port).second) r.fail(where, "port '" + port + "' appears twice");
                (io == 0 ? ins : outs).emplace_back(port, var(kv.value.GetString(), where));
            }
        }
        Attributes attrs;
        const Value& aj = r.member(oj, "attributes", where);
        if (!aj.IsObject()) r.fail(where, "'attributes' should be an object");
        for (const auto& kv : aj.GetObject())
            attrs.set_value(kv.name.GetString(), read_attr(r, kv.value, where + ", attribute '" + kv.name.GetString() + "'"));
        std::vector<std::pair<std::string, TensorType>> types;
        for (const auto& [port, v] : outs) types.push_back({port, {v->order(), v->shape(), v->dtype()}});
        Operator* op = g.add_op(type, name, std::move(ins), std::move(outs), std::move(attrs));
        op->set_layer(r.str(oj, "layer", where));
        declared[op] = std::move(types);
    }
    g.validate();

    // Every operator's recorded outputs must be what its schema infers from its inputs.
    for (const Operator* op : g.topological_order()) {
        auto inferred = reg.op(op->type()).infer(*op);
        const auto& want = declared.at(op);
        if (inferred.size() != want.size())
            throw ShapeError(json_path + ": " + op->describe() + " records " + std::to_string(want.size()) +
                             " outputs, its schema infers " + std::to_string(inferred.size()));
        for (std::size_t i = 0; i < want.size(); ++i) {
            const auto& [port, t] = inferred[i];
            const Variable* v = op->output_or_null(port);
            if (!v || want[i].first != port || t.order != v->order() || t.shape != v->shape() || t.dtype != v->dtype())
                throw ShapeError(json_path + ": " + op->describe() + ": output '" + want[i].first + "' is recorded as " +
                                 (v ? v->describe() : std::string("missing")) + ", the schema infers '" + port + "' " +
                                 t.order.str() + " " + shape_str(t.shape));
        }
    }
    return g;
}

}  // namespace

Graph read(const std::string& dir, const Registry& reg) {
    const fs::path root(dir);
    const std::string json_path = (root / detail::kGraphFile).string();
    std::ifstream in(json_path, std::ios::binary);
    if (!in) throw IOError("cannot open " + json_path);
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    const std::string bin_path = (root / detail::kWeightsFile).string();
    const Mapping bin(bin_path);
    return parse({text, json_path, bin.data(), bin.size(), bin_path}, reg);
}

Graph read_memory(const std::string& graph_json, const void* weights, std::size_t weights_bytes, const Registry& reg,
                  const std::string& name) {
    if (!weights && weights_bytes) throw FormatError(name + ": weights.bin has " + std::to_string(weights_bytes) + " bytes but no data");
    const std::string json_path = name + "/" + detail::kGraphFile, bin_path = name + "/" + detail::kWeightsFile;
    return parse({graph_json, json_path, static_cast<const unsigned char*>(weights), weights_bytes, bin_path}, reg);
}

}  // namespace graft::descriptor
