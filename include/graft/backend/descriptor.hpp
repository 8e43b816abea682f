// graft/backend/descriptor.hpp - the graft descriptor: an (optimized) graph as DIR/graph.json
// plus DIR/weights.bin, and back.
//
// graph.json (RapidJSON, keys in a fixed order) holds the format version, the graft version,
// the host-facing inputs and outputs, every variable (dtype, order, shape with "?" for the
// batch; constants with their offset and size in weights.bin), every operator (type, name,
// layer, named inputs and outputs, typed attributes) in topological order, the memory plan at
// batch 1, and the plugins whose op types the graph uses. weights.bin holds the constants as
// raw little-endian float32, each at a 64-byte aligned offset; its size and CRC-32 are in the JSON.
//
// An operator is rebuilt from its type name and attributes through the registry, so custom op
// types from plugins round-trip when their plugin is loaded. Writing the graph read from a
// descriptor gives byte-identical files.
#pragma once

#include <cstddef>
#include <string>

#include "graft/error.hpp"
#include "graft/export.hpp"
#include "graft/ir/graph.hpp"
#include "graft/registry.hpp"

namespace graft::descriptor {

/// The format version this graft writes and the only one it reads.
constexpr int kFormatVersion = 1;

/// graph.json declares a format version this graft does not read.
class VersionError : public FormatError {
public:
    using FormatError::FormatError;
};

/// weights.bin does not have the size or CRC-32 that graph.json records.
class ChecksumError : public FormatError {
public:
    using FormatError::FormatError;
};

/// A constant's offset or size lies outside weights.bin (or is misaligned or of the wrong size).
class RangeError : public FormatError {
public:
    using FormatError::FormatError;
};

/// An operator type no schema is registered for; `plugin()` names the plugin graph.json says
/// provides it (empty if none is recorded).
class UnknownOpError : public UnsupportedError {
public:
    UnknownOpError(const std::string& what, std::string op_type, std::string plugin)
        : UnsupportedError(what), op_type_(std::move(op_type)), plugin_(std::move(plugin)) {}
    const std::string& op_type() const noexcept { return op_type_; }
    const std::string& plugin() const noexcept { return plugin_; }

private:
    std::string op_type_, plugin_;
};

/// Writes `g` to directory `dir` (graph.json and weights.bin). The files are written into a
/// temporary directory beside `dir` that is renamed to `dir` at the end, so a failure leaves
/// nothing behind. An existing `dir` is replaced only if it is empty or a descriptor itself;
/// IOError otherwise.
GRAFT_API void write(const Graph& g, const Registry& reg, const std::string& dir);

/// Reads a descriptor directory. Everything is validated: FormatError for malformed JSON or a
/// missing field, VersionError, ChecksumError, RangeError, UnknownOpError, ShapeError when an
/// operator's recorded outputs disagree with its schema's inference, GraphError for a broken graph.
GRAFT_API Graph read(const std::string& dir, const Registry& reg);

/// Reads a descriptor held in memory: graph.json's text and weights.bin's bytes (for instance
/// fetched by a browser, or embedded in a program). Validated exactly as read() does; `name`
/// stands for the directory in messages ("NAME/graph.json: ..."). The weights are copied out,
/// so the buffer need not outlive the call.
GRAFT_API Graph read_memory(const std::string& graph_json, const void* weights, std::size_t weights_bytes,
                            const Registry& reg, const std::string& name = "descriptor");

/// True if `path` is a directory holding graph.json.
GRAFT_API bool is_descriptor(const std::string& path);

}  // namespace graft::descriptor
