// tools/graft/npy.cpp - .npy I/O through xtensor's xnpy, and atomic file writes.
#include "npy.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <system_error>
#include <type_traits>
#include <vector>

#include <fmt/format.h>
#include <xtensor/xadapt.hpp>
#include <xtensor/xnpy.hpp>

#include "graft/error.hpp"
#include "graft/ir/checked.hpp"

namespace fs = std::filesystem;

namespace graft::cli {
namespace {

/// What a .npy header declares, checked against the file before xtensor reads it: xtensor trusts
/// the header (a declared header length or shape is allocated as is, a bool byte is loaded as a
/// bool whatever its value), so nothing it is given may promise more than the file holds.
struct NpyHeader {
    std::string descr;          ///< "<f4"
    Shape shape;                ///< C order
    std::uint64_t data_offset;  ///< where the values start
    std::uint64_t file_size;
};

constexpr std::uint64_t kMaxNpyHeader = std::uint64_t{1} << 20;

/// The value of `key` in the header's dictionary text: from after its ':' to the next top-level
/// ',' or '}' (a tuple's commas are inside its parentheses). "" if the key is not there.
std::string npy_value(const std::string& header, const std::string& key) {
    const auto at = header.find("'" + key + "'");
    if (at == std::string::npos) return "";
    auto colon = header.find(':', at + key.size() + 2);
    if (colon == std::string::npos) return "";
    std::size_t end = colon + 1;
    for (int depth = 0; end < header.size(); ++end) {
        const char c = header[end];
        if (c == '(') ++depth;
        else if (c == ')') --depth;
        else if (depth == 0 && (c == ',' || c == '}')) break;
    }
    std::string v = header.substr(colon + 1, end - colon - 1);
    v.erase(std::remove(v.begin(), v.end(), ' '), v.end());
    return v;
}

/// The header of the .npy file at `path`; FormatError naming the file for a bad preamble,
/// header or shape.
NpyHeader read_npy_header(const std::string& path) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) throw IOError(fmt::format("cannot open {}: {}", path, std::generic_category().message(errno)));
    NpyHeader h;
    h.file_size = static_cast<std::uint64_t>(in.tellg());
    in.seekg(0);
    unsigned char pre[12] = {};
    in.read(reinterpret_cast<char*>(pre), 10);
    if (in.gcount() < 10 || std::memcmp(pre, "\x93NUMPY", 6) != 0)
        throw FormatError(fmt::format("{} is not a .npy file (it does not start with \\x93NUMPY)", path));
    std::uint64_t header_len = pre[8] | (std::uint64_t{pre[9]} << 8);
    h.data_offset = 10;
    if (pre[6] == 2 && pre[7] == 0) {
        in.read(reinterpret_cast<char*>(pre + 10), 2);
        if (in.gcount() < 2) throw FormatError(fmt::format("{} is truncated: it ends inside its .npy preamble", path));
        header_len |= (std::uint64_t{pre[10]} << 16) | (std::uint64_t{pre[11]} << 24);
        h.data_offset = 12;
    } else if (pre[6] != 1 || pre[7] != 0) {
        throw FormatError(fmt::format("{} is .npy format version {}.{}; graft reads versions 1.0 and 2.0", path, pre[6], pre[7]));
    }
    if (header_len > kMaxNpyHeader || header_len > h.file_size - h.data_offset)
        throw FormatError(fmt::format("{}: its .npy header is {} bytes, more than the file's {} bytes after the preamble{}", path,
                                      header_len, h.file_size - h.data_offset,
                                      header_len > kMaxNpyHeader ? fmt::format(" or the {} graft reads", kMaxNpyHeader) : ""));
    std::string header(static_cast<std::size_t>(header_len), '\0');
    in.read(header.data(), static_cast<std::streamsize>(header.size()));
    h.data_offset += header_len;
    if (header.empty() || header.back() != '\n' || header.find('{') == std::string::npos)
        throw FormatError(fmt::format("{}: the .npy header is not a dictionary ending in a newline", path));
    // xtensor reads the keys only in the order numpy writes them.
    const auto descr_at = header.find("'descr'"), fortran_at = header.find("'fortran_order'"), shape_at = header.find("'shape'");
    if (descr_at == std::string::npos || fortran_at == std::string::npos || shape_at == std::string::npos ||
        !(descr_at < fortran_at && fortran_at < shape_at))
        throw FormatError(fmt::format("{}: the .npy header does not hold 'descr', 'fortran_order' and 'shape' in that order", path));
    const std::string descr = npy_value(header, "descr");
    if (descr.size() < 2 || descr.front() != '\'' || descr.back() != '\'')
        throw FormatError(fmt::format("{}: the .npy header's 'descr' is not a quoted type string", path));
    h.descr = descr.substr(1, descr.size() - 2);
    const std::string fortran = npy_value(header, "fortran_order");
    if (fortran != "True" && fortran != "False")
        throw FormatError(fmt::format("{}: the .npy header's 'fortran_order' is '{}', expected True or False", path, fortran));
    const std::string shape = npy_value(header, "shape");
    if (shape.size() < 2 || shape.front() != '(' || shape.back() != ')')
        throw FormatError(fmt::format("{}: the .npy header's 'shape' is not a tuple", path));
    std::size_t i = 1;
    while (i + 1 < shape.size()) {
        std::size_t j = i;
        std::int64_t d = 0;
        while (j + 1 < shape.size() && shape[j] >= '0' && shape[j] <= '9') {
            if (d > kMaxElements) break;
            d = d * 10 + (shape[j] - '0');
            ++j;
        }
        if (j == i || d > kMaxElements || (shape[j] != ',' && j + 1 != shape.size()))
            throw FormatError(fmt::format("{}: the .npy header's shape {} is not a tuple of sizes of at most {}", path, shape,
                                          checked::limit_str(kMaxElements)));
        h.shape.push_back(d);
        i = shape[j] == ',' ? j + 1 : j;
    }
    if (h.shape.size() > 32) throw FormatError(fmt::format("{}: the .npy shape {} has more than 32 dimensions", path, shape));
    return h;
}

/// The bytes of one value of a .npy type string graft reads, 0 for the others.
std::uint64_t npy_item_size(const std::string& descr) {
    static const std::map<std::string, std::uint64_t> sizes = {{"<f4", 4}, {"<f8", 8}, {"<i8", 8}, {"<i4", 4},
                                                               {"<u2", 2}, {"|u1", 1}, {"|i1", 1}, {"|b1", 1}};
    const auto it = sizes.find(descr);
    return it == sizes.end() ? 0 : it->second;
}

/// The header's shape holds at most kMaxElements elements and the file holds all their values;
/// a bool file holds only 0 and 1. FormatError naming the file otherwise.
void check_npy_data(const std::string& path, const NpyHeader& h) {
    const auto n = static_cast<std::uint64_t>(checked::static_elements(path, ".npy shape", h.shape));
    const std::uint64_t want = n * npy_item_size(h.descr), have = h.file_size - h.data_offset;
    if (want > have)
        throw FormatError(fmt::format("{} is truncated: its header promises shape {} ({} bytes) but the data ends after {} bytes", path,
                                      shape_str(h.shape), want, have));
    if (h.descr != "|b1") return;
    std::ifstream in(path, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(h.data_offset));
    std::vector<char> bytes(static_cast<std::size_t>(n));
    in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    for (std::size_t i = 0; i < bytes.size(); ++i)
        if (bytes[i] != 0 && bytes[i] != 1)
            throw FormatError(fmt::format("{}: bool element {} is the byte {}, expected 0 or 1", path, i,
                                          static_cast<unsigned>(static_cast<unsigned char>(bytes[i]))));
}

/// "<i8" -> "int64 ('<i8')", for messages.
std::string dtype_name(const std::string& descr) {
    static const std::map<char, const char*> kinds = {{'f', "float"}, {'i', "int"}, {'u', "uint"}, {'c', "complex"}};
    if (descr == "|b1") return "bool ('|b1')";
    if (descr.size() != 3 || !kinds.count(descr[1]) || descr[2] < '1' || descr[2] > '8') return "'" + descr + "'";
    return fmt::format("{}{} ('{}')", kinds.at(descr[1]), 8 * (descr[2] - '0'), descr);
}

/// The .npy file's array as T; `Keep` the element type (a tensor of T's dtype) or make it float32.
/// `v` as Keep: float64 beyond float32's range becomes an infinity, as numpy's astype gives (a
/// plain cast of it is undefined behaviour).
template <class Keep, class T>
Keep to_kept(T v) {
    if constexpr (std::is_same_v<T, double> && std::is_same_v<Keep, float>) {
        constexpr double kMax = std::numeric_limits<float>::max();
        if (v > kMax) return std::numeric_limits<float>::infinity();
        if (v < -kMax) return -std::numeric_limits<float>::infinity();
    }
    return static_cast<Keep>(v);
}

template <class T, class Keep>
Tensor load_as_tensor(const std::string& path, const Shape& expected) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw IOError(fmt::format("cannot open {}: {}", path, std::generic_category().message(errno)));
    auto array = xt::load_npy<T>(in);
    Shape shape(array.shape().begin(), array.shape().end());
    if (!in)
        throw FormatError(fmt::format("{} is truncated: its header promises shape {} but the data ends early", path,
                                      shape_str(shape)));
    if (shape != expected)  // xtensor read the header differently from graft: refuse rather than guess
        throw FormatError(fmt::format("{}: the .npy header's shape {} is ambiguous (read as {})", path, shape_str(expected),
                                      shape_str(shape)));
    Tensor t(std::move(shape), dtype_of<Keep>());
    std::transform(array.begin(), array.end(), t.data<Keep>(), [](T v) { return to_kept<Keep>(v); });
    return t;
}

/// A tensor's elements as a C++ array of its dtype, for xtensor.
template <class F>
auto with_elements(const Tensor& t, F f) {
    switch (t.dtype()) {
        case DType::int64: return f(t.data<std::int64_t>());
        case DType::int32: return f(t.data<std::int32_t>());
        case DType::uint8: return f(t.data<std::uint8_t>());
        case DType::uint16: return f(t.data<std::uint16_t>());
        case DType::int8: return f(t.data<std::int8_t>());
        case DType::boolean: return f(t.data<bool>());
        case DType::float32: break;
    }
    return f(t.data<float>());
}

}  // namespace

Tensor read_npy(const std::string& path) {
    try {
        const NpyHeader h = read_npy_header(path);
        const auto& descr = h.descr;
        if (npy_item_size(descr)) check_npy_data(path, h);
        // By the file's declared dtype; Session::run then checks the values against the model's.
        if (descr == "<f8") return load_as_tensor<double, float>(path, h.shape);
        if (descr == "<f4") return load_as_tensor<float, float>(path, h.shape);
        if (descr == "<i8") return load_as_tensor<std::int64_t, std::int64_t>(path, h.shape);
        if (descr == "<i4") return load_as_tensor<std::int32_t, std::int32_t>(path, h.shape);
        if (descr == "<u2") return load_as_tensor<std::uint16_t, std::uint16_t>(path, h.shape);
        if (descr == "|u1") return load_as_tensor<std::uint8_t, std::uint8_t>(path, h.shape);
        if (descr == "|i1") return load_as_tensor<std::int8_t, std::int8_t>(path, h.shape);
        if (descr == "|b1") return load_as_tensor<bool, bool>(path, h.shape);
        throw FormatError(fmt::format("{} holds {} values, expected float32 ('<f4'), float64 ('<f8'), int64 ('<i8'), int32 "
                                      "('<i4'), uint16 ('<u2'), uint8 ('|u1'), int8 ('|i1') or bool ('|b1')",
                                      path, dtype_name(descr)));
    } catch (const Error&) {
        throw;
    } catch (const std::exception& e) {
        throw FormatError(fmt::format("{} is not a readable .npy file ({})", path, e.what()));
    }
}

std::string npy_bytes(const Tensor& t) {
    std::vector<std::size_t> shape(t.shape().begin(), t.shape().end());
    return with_elements(t, [&](const auto* p) { return xt::dump_npy(xt::adapt(p, t.size(), xt::no_ownership(), shape)); });
}

}  // namespace graft::cli
