// graft/printable.hpp - names from a model file, made safe to print.
//
// A layer, node or weight name is untrusted text: ESC, BEL, CR or a form feed in it would act on
// the terminal (or break the one-line error format) if echoed raw. Every name graft puts into an
// error message or prints (graft inspect) goes through printable() first.
#pragma once

#include <string>
#include <string_view>

namespace graft {

/// `s` with every control character (C0, DEL, the C1 range U+0080..U+009F) and every byte that is
/// not part of valid UTF-8 written as \\xNN; printable ASCII and valid UTF-8 text are unchanged.
inline std::string printable(std::string_view s) {
    static const char* hex = "0123456789abcdef";
    std::string out;
    out.reserve(s.size());
    auto escape = [&](unsigned char c) {
        out += "\\x";
        out += hex[c >> 4];
        out += hex[c & 15];
    };
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) {
            if (c < 0x20 || c == 0x7f) escape(c);
            else out += static_cast<char>(c);
            ++i;
            continue;
        }
        // The length of a UTF-8 sequence led by c, and its smallest code point (no overlongs).
        const std::size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
        unsigned cp = len == 2 ? c & 0x1fu : len == 3 ? c & 0x0fu : c & 0x07u;
        bool ok = len != 0 && i + len <= s.size();
        for (std::size_t k = 1; ok && k < len; ++k) {
            const auto cc = static_cast<unsigned char>(s[i + k]);
            ok = (cc & 0xc0) == 0x80;
            cp = (cp << 6) | (cc & 0x3fu);
        }
        ok = ok && !(len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) && !(len == 4 && (cp < 0x10000 || cp > 0x10ffff)) &&
             !(cp >= 0x80 && cp <= 0x9f);
        if (!ok) {
            escape(c);
            ++i;
            continue;
        }
        out.append(s.substr(i, len));
        i += len;
    }
    return out;
}

}  // namespace graft
