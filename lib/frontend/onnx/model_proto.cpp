// The ONNX file reader: protobuf parsing with explicit limits, ONNX's checker, opset imports and
// tensor data (typed fields, raw_data, external files confined to the model's folder).
#include "frontend/onnx/model_proto.hpp"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <onnx/checker.h>

#include "graft/error.hpp"
#include "graft/frontend/onnx.hpp"

namespace graft::onnx {

namespace fs = std::filesystem;

namespace {

/// Protobuf refuses messages over 2 GiB; so does graft, before reading (larger weights belong in
/// external data files).
constexpr std::uint64_t kMaxProtoBytes = std::numeric_limits<int>::max();
/// Nesting of graphs in attributes (If/Loop bodies) and of messages; far above real models.
constexpr int kMaxRecursion = 64;
/// Tensors larger than this are refused (16 GiB of values): a size read from an untrusted file
/// must not become an allocation that takes the host down.
constexpr std::uint64_t kMaxTensorBytes = std::uint64_t{16} << 30;

std::string domain_name(const std::string& d) { return d.empty() ? kDefaultDomain : d; }

std::size_t element_bytes(int t) {
    using P = ::onnx::TensorProto;
    switch (t) {
        case P::FLOAT: case P::INT32: case P::UINT32: return 4;
        case P::DOUBLE: case P::INT64: case P::UINT64: return 8;
        case P::FLOAT16: case P::BFLOAT16: case P::INT16: case P::UINT16: return 2;
        case P::INT8: case P::UINT8: case P::BOOL: return 1;
        default: return 0;
    }
}

float half_to_float(std::uint16_t h) {
    const std::uint32_t sign = (h >> 15) & 1u, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    float v;
    if (exp == 0) v = std::ldexp(static_cast<float>(mant), -24);
    else if (exp == 31) v = mant ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
    else v = std::ldexp(static_cast<float>(mant | 0x400u), static_cast<int>(exp) - 25);
    return sign ? -v : v;
}

float bfloat_to_float(std::uint16_t b) {
    const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
    float v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
}

/// Little-endian element `k` of a raw buffer holding elements of type `t`, as double (floats)
/// or int64 (integers). Every x86 and ARM host graft targets is little-endian.
template <class T>
T load(const std::string& raw, std::size_t k) {
    T v;
    std::memcpy(&v, raw.data() + k * sizeof(T), sizeof(T));
    return v;
}

/// The bytes of external data: `location` confined to the model's folder, offset and length
/// checked against the file.
std::string read_external(const ::onnx::TensorProto& t, const ModelFile& file, const std::string& what,
                          std::uint64_t expected) {
    std::string location;
    std::uint64_t offset = 0, length = 0;
    bool has_length = false;
    for (const auto& e : t.external_data()) {
        auto number = [&](const std::string& v) -> std::uint64_t {
            if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos || v.size() > 19)
                throw FormatError(what + ": external data " + e.key() + " '" + v + "' is not a non-negative integer");
            return std::stoull(v);
        };
        if (e.key() == "location") location = e.value();
        else if (e.key() == "offset") offset = number(e.value());
        else if (e.key() == "length") length = number(e.value()), has_length = true;
    }
    if (location.empty()) throw FormatError(what + ": external data without a 'location'");
    const fs::path rel(location);
    if (rel.is_absolute() || rel.has_root_name())
        throw FormatError(what + ": external data location '" + location +
                          "' is an absolute path; it must be relative to the model's folder");
    std::error_code ec;
    const fs::path base = fs::weakly_canonical(fs::path(file.dir.empty() ? "." : file.dir), ec);
    const fs::path full = fs::weakly_canonical(base / rel, ec);
    auto b = base.begin(), f = full.begin();
    for (; b != base.end() && f != full.end() && *b == *f; ++b, ++f) {}
    if (ec || b != base.end())
        throw FormatError(what + ": external data location '" + location + "' leaves the model's folder " + base.string());
    const auto size = fs::file_size(full, ec);
    if (ec) throw IOError(what + ": cannot read external data file " + full.string() + ": " + ec.message());
    if (!has_length) length = expected;
    if (length != expected)
        throw FormatError(what + ": external data length " + std::to_string(length) + " bytes, expected " +
                          std::to_string(expected) + " for its type and shape");
    if (offset > size || size - offset < length)
        throw FormatError(what + ": external data offset " + std::to_string(offset) + " + length " + std::to_string(length) +
                          " is past the end of " + full.string() + " (" + std::to_string(size) + " bytes)");
    std::ifstream in(full, std::ios::binary);
    std::string bytes(length, '\0');
    in.seekg(static_cast<std::streamoff>(offset));
    if (!in.read(bytes.data(), static_cast<std::streamsize>(length)))
        throw IOError(what + ": cannot read " + std::to_string(length) + " bytes of external data from " + full.string());
    return bytes;
}

}  // namespace

std::string onnx_type_name(int t) {
    using P = ::onnx::TensorProto;
    switch (t) {
        case P::FLOAT: return "float32";
        case P::DOUBLE: return "float64";
        case P::FLOAT16: return "float16";
        case P::BFLOAT16: return "bfloat16";
        case P::INT8: return "int8";
        case P::INT16: return "int16";
        case P::INT32: return "int32";
        case P::INT64: return "int64";
        case P::UINT8: return "uint8";
        case P::UINT16: return "uint16";
        case P::UINT32: return "uint32";
        case P::UINT64: return "uint64";
        case P::BOOL: return "bool";
        case P::STRING: return "string";
        case P::COMPLEX64: return "complex64";
        case P::COMPLEX128: return "complex128";
        default: return "type " + std::to_string(t);
    }
}

std::int64_t ModelFile::opset(const std::string& domain, const std::string& node) const {
    auto it = opsets.find(domain_name(domain));
    if (it == opsets.end())
        throw FormatError(path + ": node '" + node + "' uses domain '" + domain_name(domain) + "', which the model does not import");
    return it->second;
}

std::unique_ptr<ModelFile> read_model(const std::string& path) {
    auto m = std::make_unique<ModelFile>();
    m->path = path;
    m->dir = fs::path(path).parent_path().string();
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    if (ec) throw IOError(path + ": cannot read: " + ec.message());
    if (size > kMaxProtoBytes)
        throw FormatError(path + ": " + std::to_string(size) + " bytes; an ONNX file holds at most 2 GiB (larger weights go in external data files)");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw IOError(path + ": cannot open");
    {
        google::protobuf::io::IstreamInputStream zin(&in);
        google::protobuf::io::CodedInputStream cin(&zin);
        cin.SetTotalBytesLimit(static_cast<int>(kMaxProtoBytes));
        cin.SetRecursionLimit(kMaxRecursion);
        if (!m->proto.ParseFromCodedStream(&cin) || !cin.ConsumedEntireMessage())
            throw FormatError(path + ": not an ONNX model (the protobuf ModelProto does not parse)");
    }
    if (!m->proto.has_graph()) throw FormatError(path + ": the ONNX model has no graph");
    for (const auto& o : m->proto.opset_import()) {
        const std::string d = domain_name(o.domain());
        if (!m->opsets.emplace(d, o.version()).second) throw FormatError(path + ": opset of domain '" + d + "' imported twice");
    }
    if (m->opsets.empty() && m->proto.ir_version() < 3) m->opsets[kDefaultDomain] = 1;  // IR v2 and before: no imports
    auto def = m->opsets.find(kDefaultDomain);
    if (def != m->opsets.end() && (def->second < kMinOpset || def->second > kMaxOpset))
        throw UnsupportedError(path + ": the model imports ai.onnx opset " + std::to_string(def->second) + "; graft reads opsets " +
                               std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset) +
                               " (re-export it with an opset in that range, e.g. torch.onnx.export(..., opset_version=13))");
    try {
        ::onnx::checker::check_model(m->proto);
    } catch (const std::exception& e) {
        std::string msg = e.what();
        if (auto nl = msg.find("\n\n==>"); nl != std::string::npos) msg.erase(nl);  // the checker appends its context
        throw FormatError(path + ": ONNX's checker refuses the model: " + msg);
    }
    return m;
}

HostTensor read_tensor(const ::onnx::TensorProto& t, const ModelFile& file, const std::string& what) {
    using P = ::onnx::TensorProto;
    HostTensor h;
    check_rank(static_cast<std::size_t>(t.dims_size()), what);
    for (auto d : t.dims()) {
        if (d < 0) throw FormatError(what + ": dimension " + std::to_string(d) + " is negative");
        h.shape.push_back(d);
    }
    const int type = t.data_type();
    const std::size_t eb = element_bytes(type);
    if (eb == 0) throw UnsupportedError(what + ": element type " + onnx_type_name(type) + " is not supported (graft reads float, integer and bool tensors)");
    if (t.has_segment()) throw UnsupportedError(what + ": segmented tensors are not supported");
    // The element count, checked against overflow and the size limit before anything is allocated.
    std::uint64_t n = 1;
    for (auto d : h.shape) {
        if (d != 0 && n > kMaxTensorBytes / static_cast<std::uint64_t>(d)) throw FormatError(what + ": shape " + shape_str(h.shape) + " is too large");
        n *= static_cast<std::uint64_t>(d);
    }
    if (n * eb > kMaxTensorBytes) throw FormatError(what + ": shape " + shape_str(h.shape) + " is too large");
    const bool is_float = type == P::FLOAT || type == P::DOUBLE || type == P::FLOAT16 || type == P::BFLOAT16;
    h.kind = is_float ? HostTensor::Kind::floating : type == P::BOOL ? HostTensor::Kind::boolean : HostTensor::Kind::integer;
    // Allocated once the file is known to hold that many values (a shape alone costs nothing).
    auto allocate = [&] {
        if (is_float) h.f.resize(n);
        else h.i.resize(n);
    };

    std::string external;
    const std::string* raw = nullptr;
    if (t.data_location() == P::EXTERNAL) {
        external = read_external(t, file, what, n * eb);
        raw = &external;
    } else if (t.has_raw_data()) {
        raw = &t.raw_data();
        if (raw->size() != n * eb)
            throw FormatError(what + ": raw_data holds " + std::to_string(raw->size()) + " bytes, expected " + std::to_string(n * eb) +
                              " for " + onnx_type_name(type) + " " + shape_str(h.shape));
    }
    if (raw) {
        allocate();
        for (std::size_t k = 0; k < n; ++k) switch (type) {
                case P::FLOAT: h.f[k] = load<float>(*raw, k); break;
                case P::DOUBLE: h.f[k] = static_cast<float>(load<double>(*raw, k)); break;
                case P::FLOAT16: h.f[k] = half_to_float(load<std::uint16_t>(*raw, k)); break;
                case P::BFLOAT16: h.f[k] = bfloat_to_float(load<std::uint16_t>(*raw, k)); break;
                case P::INT8: h.i[k] = load<std::int8_t>(*raw, k); break;
                case P::UINT8: h.i[k] = load<std::uint8_t>(*raw, k); break;
                case P::BOOL: h.i[k] = load<std::uint8_t>(*raw, k) != 0; break;
                case P::INT16: h.i[k] = load<std::int16_t>(*raw, k); break;
                case P::UINT16: h.i[k] = load<std::uint16_t>(*raw, k); break;
                case P::INT32: h.i[k] = load<std::int32_t>(*raw, k); break;
                case P::UINT32: h.i[k] = load<std::uint32_t>(*raw, k); break;
                case P::INT64: h.i[k] = load<std::int64_t>(*raw, k); break;
                case P::UINT64: h.i[k] = static_cast<std::int64_t>(load<std::uint64_t>(*raw, k)); break;
                default: break;
            }
        return h;
    }
    // Typed fields: which one holds the values depends on the type (onnx.proto's comments).
    auto count = [&](std::size_t got, const char* field) {
        if (got != n)
            throw FormatError(what + ": " + field + " holds " + std::to_string(got) + " values, expected " + std::to_string(n) + " for shape " +
                              shape_str(h.shape));
        allocate();
    };
    switch (type) {
        case P::FLOAT:
            count(static_cast<std::size_t>(t.float_data_size()), "float_data");
            for (std::size_t k = 0; k < n; ++k) h.f[k] = t.float_data(static_cast<int>(k));
            break;
        case P::DOUBLE:
            count(static_cast<std::size_t>(t.double_data_size()), "double_data");
            for (std::size_t k = 0; k < n; ++k) h.f[k] = static_cast<float>(t.double_data(static_cast<int>(k)));
            break;
        case P::FLOAT16: case P::BFLOAT16:
            count(static_cast<std::size_t>(t.int32_data_size()), "int32_data");
            for (std::size_t k = 0; k < n; ++k) {
                const auto bits = static_cast<std::uint16_t>(t.int32_data(static_cast<int>(k)));
                h.f[k] = type == P::FLOAT16 ? half_to_float(bits) : bfloat_to_float(bits);
            }
            break;
        case P::INT64:
            count(static_cast<std::size_t>(t.int64_data_size()), "int64_data");
            for (std::size_t k = 0; k < n; ++k) h.i[k] = t.int64_data(static_cast<int>(k));
            break;
        case P::UINT32: case P::UINT64:
            count(static_cast<std::size_t>(t.uint64_data_size()), "uint64_data");
            for (std::size_t k = 0; k < n; ++k) h.i[k] = static_cast<std::int64_t>(t.uint64_data(static_cast<int>(k)));
            break;
        default:  // INT32, INT16, INT8, UINT16, UINT8, BOOL
            count(static_cast<std::size_t>(t.int32_data_size()), "int32_data");
            for (std::size_t k = 0; k < n; ++k) h.i[k] = t.int32_data(static_cast<int>(k));
            if (type == P::BOOL)
                for (auto& v : h.i) v = v != 0;
            break;
    }
    return h;
}

}  // namespace graft::onnx
