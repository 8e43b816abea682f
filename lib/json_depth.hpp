// The nesting depth of JSON text, measured before it is parsed: RapidJSON's parser and graft's
// walks over a config recurse once per level, so text nested 100,000 deep would overflow the
// stack (issue 17). A linear scan with no recursion; strings (and escapes in them) are skipped.
#pragma once

#include <cstddef>
#include <string>

#include "graft/error.hpp"
#include "graft/limits.hpp"

namespace graft {

/// FormatError "<where>: JSON nested deeper than <max> levels" if the text's brackets and braces
/// (outside strings) ever nest deeper than `max_depth`.
inline void check_json_depth(const std::string& text, const std::string& where, std::size_t max_depth = Limits{}.max_json_depth) {
    std::size_t depth = 0;
    bool in_string = false, escaped = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (escaped) escaped = false;
            else if (c == '\\') escaped = true;
            else if (c == '"') in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > max_depth)
                throw FormatError(where + ": JSON nested deeper than " + std::to_string(max_depth) + " levels (at offset " +
                                  std::to_string(i) + "); refused before parsing");
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
}

}  // namespace graft
