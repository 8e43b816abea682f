// tools/graft/npy.cpp - .npy I/O through xtensor's xnpy, and atomic file writes.
#include "npy.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <fstream>
#include <map>
#include <system_error>

#include <fmt/format.h>
#include <xtensor/xadapt.hpp>
#include <xtensor/xnpy.hpp>

#include "graft/error.hpp"

namespace fs = std::filesystem;

namespace graft::cli {
namespace {

/// The 'descr' entry of a .npy header ("<f4"), or "" if there is none; xtensor's loader needs the
/// element type up front and does not report the one it found.
std::string npy_descr(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::string head(256, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<std::size_t>(in.gcount()));
    auto key = head.find("'descr'");
    auto open = key == std::string::npos ? key : head.find('\'', head.find(':', key));
    auto close = open == std::string::npos ? open : head.find('\'', open + 1);
    return close == std::string::npos ? "" : head.substr(open + 1, close - open - 1);
}

/// "<i8" -> "int64 ('<i8')", for messages.
std::string dtype_name(const std::string& descr) {
    static const std::map<char, const char*> kinds = {{'f', "float"}, {'i', "int"}, {'u', "uint"}, {'c', "complex"}};
    if (descr == "|b1") return "bool ('|b1')";
    if (descr.size() != 3 || !kinds.count(descr[1]) || descr[2] < '1' || descr[2] > '8') return "'" + descr + "'";
    return fmt::format("{}{} ('{}')", kinds.at(descr[1]), 8 * (descr[2] - '0'), descr);
}

/// The .npy file's array as T; `Keep` the element type (a tensor of T's dtype) or make it float32.
template <class T, class Keep>
Tensor load_as_tensor(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw IOError(fmt::format("cannot open {}: {}", path, std::generic_category().message(errno)));
    auto array = xt::load_npy<T>(in);
    Shape shape(array.shape().begin(), array.shape().end());
    if (!in)
        throw FormatError(fmt::format("{} is truncated: its header promises shape {} but the data ends early", path,
                                      shape_str(shape)));
    Tensor t(std::move(shape), dtype_of<Keep>());
    std::transform(array.begin(), array.end(), t.data<Keep>(), [](T v) { return static_cast<Keep>(v); });
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
        const auto descr = npy_descr(path);
        // By the file's declared dtype; Session::run then checks the values against the model's.
        if (descr == "<f8") return load_as_tensor<double, float>(path);
        if (descr.empty() || descr == "<f4") return load_as_tensor<float, float>(path);  // no descr: xtensor says why
        if (descr == "<i8") return load_as_tensor<std::int64_t, std::int64_t>(path);
        if (descr == "<i4") return load_as_tensor<std::int32_t, std::int32_t>(path);
        if (descr == "<u2") return load_as_tensor<std::uint16_t, std::uint16_t>(path);
        if (descr == "|u1") return load_as_tensor<std::uint8_t, std::uint8_t>(path);
        if (descr == "|i1") return load_as_tensor<std::int8_t, std::int8_t>(path);
        if (descr == "|b1") return load_as_tensor<bool, bool>(path);
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
