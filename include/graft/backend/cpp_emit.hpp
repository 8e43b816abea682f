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
//   registry.add_generator<cpp::Backend>("MyOp", emit_my_op);
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
#include <algorithm>
#include <functional>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "graft/error.hpp"
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

// ---- kernels written once: compiled into the library and written out as text ----------------

/// A file's text compiled into a program by graft_embed_text (cmake/GraftEmbed.cmake): the file
/// name without its extension, and its contents.
struct EmbeddedText {
    const char* name;
    const char* text;
};

/// The standard headers every generated source includes: a kernel header may include these and
/// no others.
inline const std::vector<std::string>& generated_std_headers() {
    static const std::vector<std::string> h = {"algorithm", "cmath",  "cstddef", "cstdint", "cstring",
                                               "fstream",   "limits", "stdexcept", "string", "utility"};
    return h;
}

/// A kernel header as generated code uses it.
struct KernelSource {
    std::vector<std::string> needs;  ///< graft_rt headers it includes: "core" for "graft_rt/core.hpp"
    std::string body;                   ///< the text inside its `namespace graft_rt { ... }`
};

/// Splits a kernel header: a standard-library-only C++17 header laid out as
///
///     // comments ...
///     #pragma once
///     #include <cmath>                  (only generated_std_headers())
///     #include "graft_rt/core.hpp"      (other kernel headers it needs: its requirements)
///     namespace graft_rt {
///     ... the kernels ...
///     }  // namespace graft_rt
///
/// The same file is compiled into the program that runs it natively and, through this, written
/// into generated code (inside the model's own namespace). GraphError naming `name` if the layout
/// is not followed.
inline KernelSource parse_kernel_header(const std::string& name, std::string_view text) {
    auto fail = [&](const std::string& why) -> KernelSource {
        throw GraphError("kernel header '" + name + "': " + why);
    };
    KernelSource out;
    const std::string open = "namespace graft_rt {", close = "}  // namespace graft_rt";
    const auto begin = text.find(open);
    const auto end = text.rfind(close);
    if (begin == std::string_view::npos || end == std::string_view::npos || end < begin)
        return fail("expected its kernels between '" + open + "' and '" + close + "'");
    std::size_t pos = 0;
    while (pos < begin) {  // the preamble: comments, #pragma once, #include lines, blank lines
        auto eol = text.find('\n', pos);
        if (eol == std::string_view::npos || eol > begin) eol = begin;
        std::string_view line = text.substr(pos, eol - pos);
        pos = eol + 1;
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
        if (line.empty() || line.rfind("//", 0) == 0 || line == "#pragma once") continue;
        const std::string_view inc = "#include ";
        if (line.rfind(inc, 0) != 0) return fail("unexpected line before the namespace: " + std::string(line));
        std::string_view what = line.substr(inc.size());
        if (what.size() > 2 && what.front() == '<' && what.back() == '>') {
            const std::string h(what.substr(1, what.size() - 2));
            const auto& ok = generated_std_headers();
            if (std::find(ok.begin(), ok.end(), h) == ok.end())
                return fail("includes <" + h + ">, which generated code does not include");
        } else if (what.rfind("\"graft_rt/", 0) == 0 && what.size() > 15 && what.substr(what.size() - 5) == ".hpp\"") {
            out.needs.emplace_back(what.substr(10, what.size() - 15));
        } else {
            return fail("includes " + std::string(what) + " (only standard headers and \"graft_rt/NAME.hpp\")");
        }
    }
    out.body = std::string(text.substr(begin + open.size(), end - begin - open.size()));
    return out;
}

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
    /// Makes graft's kernel header `key` (lib/rt/graft_rt/KEY.hpp: the code the native backend
    /// runs too) and the headers it requires part of the generated source.
    virtual void use(const std::string& key) = 0;

    /// Makes a kernel header of one's own (see parse_kernel_header; e.g. a plugin's, embedded
    /// with graft_embed_text) part of the generated source, after graft's headers it requires.
    void support_header(const std::string& key, std::string_view header_text) {
        KernelSource k = parse_kernel_header(key, header_text);
        for (const auto& r : k.needs) use(r);
        support(key, k.body);
    }

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

/// The cpp backend's generator for an op type: an *emitter*, writing the body of the op's function.
using Emitter = std::function<void(EmitContext&)>;

/// The cpp backend's tag: `registry.add_generator<cpp::Backend>("MyOp", emit_my_op)`.
struct Backend {
    static constexpr const char* name = "cpp";
    using Generator = Emitter;
};

}  // namespace graft::cpp
