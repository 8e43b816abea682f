// The text of graft's kernel headers (lib/rt/graft_rt/*.hpp), compiled in by graft_embed_text
// (cmake/GraftEmbed.cmake): the generated C++ backend writes the same code the native backend runs.
#pragma once

#include <cstddef>
#include <string_view>

#include "graft/backend/cpp_emit.hpp"

extern const graft::cpp::EmbeddedText graft_rt_headers[];
extern const std::size_t graft_rt_headers_count;

namespace graft::rt {

/// Kernel header `name` ("pool" for graft_rt/pool.hpp), or null.
inline const cpp::EmbeddedText* find_header(std::string_view name) {
    for (std::size_t i = 0; i < graft_rt_headers_count; ++i)
        if (name == graft_rt_headers[i].name) return &graft_rt_headers[i];
    return nullptr;
}

}  // namespace graft::rt
