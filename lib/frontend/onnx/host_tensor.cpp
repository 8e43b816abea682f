#include "frontend/onnx/host_tensor.hpp"

#include <algorithm>
#include <cmath>

#include "graft/error.hpp"

namespace graft::onnx {

std::string SymInt::str() const {
    if (batch == 0) return std::to_string(value);
    std::string s = batch == 1 ? "N" : batch == -1 ? "-N" : std::to_string(batch) + "*N";
    if (value != 0) s += (value > 0 ? "+" : "") + std::to_string(value);
    return s;
}

bool HostTensor::symbolic() const noexcept {
    return std::any_of(batch.begin(), batch.end(), [](std::int64_t b) { return b != 0; });
}

namespace {

[[noreturn]] void fail_batch_dependent(const std::string& what) {
    throw UnsupportedError(what + " depends on the batch size, which a dynamic batch fixes only when the model runs; graft "
                                  "uses such values only as shapes");
}

}  // namespace

void HostTensor::push(const HostTensor& t, std::size_t k) {
    if (is_float()) {
        if (!t.is_float() && t.sym(k).batch != 0) fail_batch_dependent("a value");
        f.push_back(t.is_float() ? t.f[k] : static_cast<float>(t.i[k]));
        return;
    }
    if (t.is_float()) throw FormatError("a floating value where integers are expected");
    push(t.sym(k));
}

void HostTensor::push(SymInt v) {
    if (v.batch != 0 || !batch.empty()) {
        batch.resize(i.size(), 0);
        batch.push_back(v.batch);
    }
    i.push_back(v.value);
}

std::vector<float> HostTensor::floats() const {
    if (kind == Kind::floating) return f;
    if (symbolic()) fail_batch_dependent("a value");
    return std::vector<float>(i.begin(), i.end());
}

void check_rank(std::size_t rank, const std::string& what) {
    if (rank > kMaxRank)
        throw UnsupportedError(what + ": a tensor of " + std::to_string(rank) + " dimensions; graft takes at most " +
                               std::to_string(kMaxRank));
}

std::vector<SymInt> HostTensor::sym_ints(const std::string& what) const {
    std::vector<SymInt> out;
    if (kind == Kind::floating) {
        for (auto v : ints(what)) out.push_back({v, 0});
    } else {
        for (std::size_t k = 0; k < i.size(); ++k) out.push_back(sym(k));
    }
    return out;
}

std::vector<std::int64_t> HostTensor::ints(const std::string& what) const {
    if (symbolic()) fail_batch_dependent(what);
    if (kind != Kind::floating) return i;
    std::vector<std::int64_t> out;
    out.reserve(f.size());
    for (float v : f) {
        if (!(v == std::nearbyint(v)) || std::fabs(v) > 9.0e15f) throw FormatError(what + " holds " + std::to_string(v) + ", expected integers");
        out.push_back(static_cast<std::int64_t>(v));
    }
    return out;
}

}  // namespace graft::onnx
