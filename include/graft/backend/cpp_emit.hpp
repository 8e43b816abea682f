// graft/backend/cpp_emit.hpp - what a C++ generator handler (an "emitter") sees.
//
// The cpp backend writes a model as standalone C++17 (graft::cpp::generate in graft/backend/cpp.hpp).
// Every operator becomes one function in the generated source, named after the op and the Keras
// layer it came from, whose parameters are the op's inputs and outputs as float pointers into the
// Session's planned buffers (or its weights). An emitter registered for (cpp, op type) writes the
// body of that function through an EmitContext:
//
//   void emit_my_op(graft::cpp::EmitContext& ctx) {
//       const auto n = ctx.op().input("x")->numel();
//       ctx.support("my_op", R"(inline void my_op(const float* x, float* y, std::int64_t n) { ... })");
//       ctx.constant_i64("n", n, "elements");                   // constexpr std::int64_t n = 24;
//       ctx.line("graft_rt::my_op({}, {}, n);", ctx.input("x"), ctx.output("y"));
//   }
//   registry.add_cpp_emitter("MyOp", emit_my_op);
//
// Kernels that several ops share go into support sections (ctx.support): fixed, readable C++
// emitted once per model inside namespace graft_rt, only when an op uses them. Per-op bodies call
// them with constant arguments. Header-only, so a plugin can register emitters without linking graft.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "graft/ir/operator.hpp"

namespace graft::cpp {

// ---- literals -------------------------------------------------------------------------------

/// A float literal that reads back as the same float: "0.5f", "1e-05f", "-3.f".
inline std::string lit(float v) {
    if (std::isnan(v)) return "std::numeric_limits<float>::quiet_NaN()";
    if (std::isinf(v)) return v > 0 ? "std::numeric_limits<float>::infinity()" : "-std::numeric_limits<float>::infinity()";
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
    std::string s = buf;
    for (int digits = 1; digits < 9; ++digits) {  // the shortest form that round-trips
        std::snprintf(buf, sizeof buf, "%.*g", digits, static_cast<double>(v));
        if (std::strtof(buf, nullptr) == v) {
            s = buf;
            break;
        }
    }
    if (s.find_first_of(".en") == std::string::npos) s += ".";
    return s + "f";
}
inline std::string lit(double v) { return lit(static_cast<float>(v)); }
inline std::string lit(bool v) { return v ? "true" : "false"; }
inline std::string lit(std::int64_t v) { return std::to_string(v); }
inline std::string lit(int v) { return std::to_string(v); }

namespace detail {
template <class T>
std::string to_text(const T& v) {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, bool>) {
        return lit(v);
    } else if constexpr (std::is_convertible_v<const T&, std::string_view>) {
        return std::string(std::string_view(v));
    } else {
        std::ostringstream o;
        o << v;
        return o.str();
    }
}
inline void format_into(std::string& out, std::string_view fmt, const std::vector<std::string>& args) {
    std::size_t next = 0;
    for (std::size_t i = 0; i < fmt.size(); ++i) {
        if (fmt[i] == '{' && i + 1 < fmt.size() && fmt[i + 1] == '}') {
            out += next < args.size() ? args[next] : std::string("{?}");
            ++next;
            ++i;
        } else if (fmt[i] == '{' && i + 1 < fmt.size() && fmt[i + 1] == '{') {
            out += '{';
            ++i;
        } else if (fmt[i] == '}' && i + 1 < fmt.size() && fmt[i + 1] == '}') {
            out += '}';
            ++i;
        } else {
            out += fmt[i];
        }
    }
}
}  // namespace detail

/// "{}" placeholders replaced by the arguments in turn (floats as exact literals); "{{" / "}}"
/// are literal braces.
template <class... A>
std::string format(std::string_view fmt, const A&... args) {
    std::string out;
    detail::format_into(out, fmt, {detail::to_text(args)...});
    return out;
}

// ---- the structured writer ------------------------------------------------------------------

/// Source text with indentation: line() writes one line at the current depth; block() writes
/// "head {", the body one level deeper, then "}".
class Writer {
public:
    explicit Writer(int depth = 0) : depth_(depth) {}

    template <class... A>
    void line(std::string_view fmt, const A&... args) {
        if (fmt.empty()) {
            text_ += '\n';
            return;
        }
        text_.append(static_cast<std::size_t>(depth_) * 4, ' ');
        detail::format_into(text_, fmt, {detail::to_text(args)...});
        text_ += '\n';
    }
    void blank() { text_ += '\n'; }
    /// "// text", one comment line per line of text.
    void comment(const std::string& text) {
        std::size_t start = 0;
        while (start <= text.size()) {
            auto end = text.find('\n', start);
            if (end == std::string::npos) end = text.size();
            line("// {}", text.substr(start, end - start));
            start = end + 1;
        }
    }
    template <class F>
    void block(const std::string& head, F body, const std::string& tail = "") {
        line("{} {{", head);
        ++depth_;
        body();
        --depth_;
        line("}{}", tail);
    }
    /// Raw text (already indented), e.g. a support section.
    void raw(const std::string& text) {
        text_ += text;
        if (!text.empty() && text.back() != '\n') text_ += '\n';
    }
    void indent() { ++depth_; }
    void dedent() { --depth_; }
    const std::string& str() const noexcept { return text_; }

private:
    std::string text_;
    int depth_ = 0;
};

// ---- what an emitter sees -------------------------------------------------------------------

class EmitContext {
public:
    virtual ~EmitContext() = default;

    /// The operator, with concrete shapes (the batch is fixed at generation).
    virtual const Operator& op() const = 0;
    /// The body of the op's function.
    virtual Writer& body() = 0;

    /// The parameter naming input / output `name` of the op: `const float*` / `float*`.
    /// An output may be the same memory as the op's first input when the op's schema is
    /// `inplace` (or `alias`): kernels must then read each element before writing it.
    virtual std::string input(const std::string& name) = 0;
    virtual std::string output(const std::string& name) = 0;
    /// A constant computed at generation time (e.g. folded BatchNormalization scales), stored
    /// with the weights; returns the name of a `const float*` parameter holding it.
    virtual std::string constant(const std::string& name, std::vector<float> data) = 0;
    /// Scratch memory for this op's run (the same bytes serve every op in turn); each call gives
    /// another block: returns the name of a `float*` parameter with at least `floats` floats.
    virtual std::string scratch(std::size_t floats) = 0;
    /// Makes support section `key` part of the generated source (once; in the order first asked
    /// for, inside namespace graft_rt). The source is fixed C++ that uses only the standard
    /// library; sections it relies on must be asked for first.
    virtual void support(const std::string& key, const std::string& source) = 0;

    // ---- conveniences over body() --------------------------------------------------------
    template <class... A>
    void line(std::string_view fmt, const A&... args) { body().line(fmt, args...); }
    void comment(const std::string& text) { body().comment(text); }
    /// "constexpr std::int64_t NAME = VALUE;  // what"
    void constant_i64(const std::string& name, std::int64_t value, const std::string& what = "") {
        if (what.empty()) body().line("constexpr std::int64_t {} = {};", name, value);
        else body().line("constexpr std::int64_t {} = {};  // {}", name, value, what);
    }
    void constant_f32(const std::string& name, float value, const std::string& what = "") {
        if (what.empty()) body().line("constexpr float {} = {};", name, lit(value));
        else body().line("constexpr float {} = {};  // {}", name, lit(value), what);
    }
    /// `const std::int64_t NAME[] = {a, b, ...};`
    void constant_list(const std::string& name, const std::vector<std::int64_t>& values, const std::string& what = "") {
        std::string list;
        for (std::size_t i = 0; i < values.size(); ++i) list += (i ? ", " : "") + std::to_string(values[i]);
        if (what.empty()) body().line("constexpr std::int64_t {}[] = {{{}}};", name, list);
        else body().line("constexpr std::int64_t {}[] = {{{}}};  // {}", name, list, what);
    }
};

/// A generator handler for the cpp backend.
using CppEmitter = std::function<void(EmitContext&)>;

}  // namespace graft::cpp
