// graft/plugin.hpp - the plugin ABI: a shared object that adds layers, op types and kernels.
//
// A plugin is a shared object (.so) with ONE exported C entry point, `graft_plugin_entry`,
// which returns a pointer to a static, C-layout info block. Write it with the macro:
//
//   #include <graft/plugin.hpp>
//   #include <graft/frontend/layer.hpp>
//
//   static void register_all(graft::Registry& r) {
//       r.add_converter("keras", "MyLayer", convert_my_layer);                // Keras class -> IR
//       r.add_op(my_op_schema());                                              // a new op type
//       r.add_generator<graft::native::Backend>("MyOp", build_my_kernel);      // its kernel builder
//       r.add_generator<graft::cpp::Backend>("MyOp", emit_my_op);              // its C++ emitter
//   }
//   GRAFT_PLUGIN("my_plugin", "1.0.0", register_all)
//
// Build it against these headers alone (graft::core, or just this include directory and
// RapidJSON's): it never links libgraft. See samples/plugin/ for a complete walk-through.
//
// Loading (host side, graft::load_plugin below) reads the info block's magic number and ABI
// version first and refuses a mismatch before any C++ type crosses the library boundary. Only
// then does it call `register_fn`, inside Registry::OwnerScope: every schema and handler the
// plugin adds records the plugin as its owner and shares ownership of the loaded library, so
// the library stays loaded as long as any of them can still be called. If registration throws
// (a key already taken, or anything else), everything the plugin added is removed again.
//
// ABI RULES. graft's core is C++ and crosses the .so boundary: Registry (and its handler tables),
// OpSchema, Operator, Variable, Graph, Attributes, the converter side (LayerContext, Config, Value,
// WeightArray), the native backend's BuildContext, Kernel, Slot and RunContext, the cpp backend's
// EmitContext and Writer, and the standard library types inside them. Backends are keys of the
// Registry, not fields, so a new backend does not change these types. GRAFT_PLUGIN_ABI_VERSION must therefore be increased whenever a header type
// that plugins use changes its layout or its virtual functions (a member added, removed or
// reordered; a virtual function added), and whenever the info block below changes. Plugin and
// host must use the same C++ standard library (libstdc++ on Linux). The first two fields of
// graft_plugin_info (magic, abi_version) never move, so any future graft can read them. As a
// safety net the info block also carries a fingerprint of those types' sizes, checked after the
// version: it catches most, not all, forgotten bumps.
//
// Build plugins with hidden visibility and export only the entry point (plugins/graft_plugin.map
// does this): the plugin's copies of inline graft code then never clash with another's, and the
// library can really be unloaded when nothing refers to it any more.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "graft/backend/cpp_emit.hpp"
#include "graft/backend/native_kernel.hpp"
#include "graft/export.hpp"
#include "graft/frontend/layer.hpp"
#include "graft/registry.hpp"
#include "graft/version.hpp"

/// "GRFT": the first field of every info block, to recognise a graft plugin's answer.
#define GRAFT_PLUGIN_MAGIC 0x47524654u

/// The one symbol a plugin exports.
#define GRAFT_PLUGIN_ENTRY_NAME "graft_plugin_entry"

#if defined(_WIN32)
#define GRAFT_PLUGIN_EXPORT __declspec(dllexport)
#else
#define GRAFT_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/// What a plugin registers: called once per registry it is loaded into.
using graft_plugin_register_fn = void (*)(graft::Registry& registry);

/// The info block a plugin's entry point returns. Plain C layout (standard-layout, no
/// constructors): the host reads `magic` and `abi_version` before anything else.
struct graft_plugin_info {
    std::uint32_t magic;        ///< GRAFT_PLUGIN_MAGIC
    std::uint32_t abi_version;  ///< GRAFT_PLUGIN_ABI_VERSION the plugin was built with
    const char* graft_version;  ///< GRAFT_VERSION_STRING the plugin was built against
    const char* name;           ///< unique plugin name, e.g. "bias_layer"
    const char* version;        ///< the plugin's own version, e.g. "1.0.0"
    graft_plugin_register_fn register_fn;
    std::uint64_t layout;       ///< graft::detail::plugin_layout_fingerprint() as the plugin saw it
};

namespace graft::detail {

/// A fingerprint of the sizes and alignments of the types that cross the plugin boundary. It
/// catches a layout change whose ABI version bump was forgotten (not every change: a reordered
/// member of the same size, or a new virtual function, needs the version bump).
constexpr std::uint64_t plugin_layout_fingerprint() {
    const std::size_t sizes[] = {
        // registry
        sizeof(Registry), alignof(Registry), sizeof(OpSchema), sizeof(TensorType), sizeof(HandlerOwner),
        sizeof(ElementwiseProgram), sizeof(ElementwiseProgram::Input),
        sizeof(PluginRecord), sizeof(HandlerTable<OpSchema>::Entry), sizeof(HandlerTable<ErasedGenerator>::Entry),
        sizeof(ConverterFn), sizeof(GeneratorRef<native::KernelBuilder>), sizeof(ConstantEvaluator),
        // IR
        sizeof(Graph), sizeof(Operator), sizeof(Variable), sizeof(ConstantVariable), sizeof(Attributes),
        sizeof(AttrValue), sizeof(Order), sizeof(Axis),
        // converters
        sizeof(LayerContext), sizeof(Config), sizeof(Value), sizeof(WeightArray),
        // native backend
        sizeof(native::Slot), sizeof(native::RunContext), sizeof(native::BuildContext), sizeof(native::Kernel),
        sizeof(native::KernelBuilder),
        // cpp backend
        sizeof(cpp::EmitContext), sizeof(cpp::Writer), sizeof(cpp::Emitter)};
    std::uint64_t h = 14695981039346656037ull;  // FNV-1a
    for (std::size_t v : sizes) h = (h ^ static_cast<std::uint64_t>(v)) * 1099511628211ull;
    return h;
}

}  // namespace graft::detail

/// The entry point's type: `extern "C" const graft_plugin_info* graft_plugin_entry(void)`.
using graft_plugin_entry_fn = const graft_plugin_info* (*)();

/// The entry point's function name: graft_plugin_entry in a shared object; a name of the
/// build's choosing when the plugin is compiled into a program (-DGRAFT_PLUGIN_STATIC_ENTRY=name,
/// registered with graft::register_static_plugin), so that several plugins link together.
#if defined(GRAFT_PLUGIN_STATIC_ENTRY)
#define GRAFT_PLUGIN_ENTRY_FUNCTION GRAFT_PLUGIN_STATIC_ENTRY
#else
#define GRAFT_PLUGIN_ENTRY_FUNCTION graft_plugin_entry
#endif

/// Defines the entry point. NAME and VERSION are string literals, REGISTER_FN a function
/// `void (graft::Registry&)`. Use it once per plugin, at namespace scope.
#define GRAFT_PLUGIN(NAME, VERSION, REGISTER_FN)                                                         \
    extern "C" GRAFT_PLUGIN_EXPORT const graft_plugin_info* GRAFT_PLUGIN_ENTRY_FUNCTION(void) {          \
        static const graft_plugin_info graft_plugin_info_block = {                                       \
            GRAFT_PLUGIN_MAGIC, GRAFT_PLUGIN_ABI_VERSION, GRAFT_VERSION_STRING, NAME, VERSION, &REGISTER_FN, \
            ::graft::detail::plugin_layout_fingerprint()};                                               \
        return &graft_plugin_info_block;                                                                 \
    }

