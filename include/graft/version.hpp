// graft/version.hpp - the library version.
#pragma once

#define GRAFT_VERSION_MAJOR 0
#define GRAFT_VERSION_MINOR 1
#define GRAFT_VERSION_PATCH 0
#define GRAFT_VERSION_STRING "0.1.0"

/// The plugin ABI version (graft/plugin.hpp): bumped whenever a type that crosses the plugin
/// boundary changes layout. It is also the shared library's SOVERSION. 4: DType gained uint8,
/// uint16, int8 and bool, OpSchema gained integer_inputs. 5: native::BuildContext gained
/// keep_shared. 6: native::BuildContext gained precision(), Model's constructors a precision.
/// 7: LoadOptions gained batch_slice. 8: LoadOptions gained huge_pages.
#define GRAFT_PLUGIN_ABI_VERSION 8u

namespace graft {
inline constexpr const char* version_string() noexcept { return GRAFT_VERSION_STRING; }
}  // namespace graft
