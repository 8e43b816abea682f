// graft/error.hpp - the one exception hierarchy graft throws.
//
// Every message names the file, the layer or op, what was found and what was expected, so a
// user can act on it without a debugger. Catch graft::Error to handle them all.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace graft {

/// Base of every error graft throws on purpose.
class Error : public std::runtime_error {
public:
    explicit Error(const std::string& what) : std::runtime_error(what) {}
    /// A short machine-friendly kind ("format", "unsupported", ...), used by the CLI.
    virtual const char* kind() const noexcept { return "error"; }
};

namespace detail {
/// An Error whose kind() is `Kind`: the base of the error classes below.
template <const char* Kind>
class KindedError : public Error {
public:
    using Error::Error;
    const char* kind() const noexcept override { return Kind; }
};
inline constexpr char kFormatKind[] = "format";
inline constexpr char kUnsupportedKind[] = "unsupported";
inline constexpr char kShapeKind[] = "shape";
inline constexpr char kGraphKind[] = "graph";
inline constexpr char kPluginKind[] = "plugin";
inline constexpr char kRegistryKind[] = "registry";
inline constexpr char kIOKind[] = "io";
inline constexpr char kDTypeKind[] = "dtype";
}  // namespace detail

/// A model or data file is malformed: not HDF5, truncated, bad JSON, a missing or misshapen weight.
class FormatError : public detail::KindedError<detail::kFormatKind> {
public:
    using KindedError::KindedError;
};

/// The model is well formed but uses something graft cannot run (a layer class, an option).
class UnsupportedError : public detail::KindedError<detail::kUnsupportedKind> {
public:
    using KindedError::KindedError;
};

/// Shapes or orders disagree: a weight with the wrong shape, an input of the wrong size.
class ShapeError : public detail::KindedError<detail::kShapeKind> {
public:
    using KindedError::KindedError;
};

/// A graph breaks an IR invariant (dangling variable, cycle, duplicate name).
class GraphError : public detail::KindedError<detail::kGraphKind> {
public:
    using KindedError::KindedError;
};

/// A plugin could not be loaded or registered.
class PluginError : public detail::KindedError<detail::kPluginKind> {
public:
    using KindedError::KindedError;
};

/// A registry key (op type, converter, generator) is already taken or missing.
class RegistryError : public detail::KindedError<detail::kRegistryKind> {
public:
    using KindedError::KindedError;
};

/// Input or output I/O failed (cannot open, cannot write, rename failed).
class IOError : public detail::KindedError<detail::kIOKind> {
public:
    using KindedError::KindedError;
};

/// An element type disagrees: a tensor read as another dtype than it holds, an input of a dtype
/// the model does not take, values the declared dtype cannot hold exactly.
class DTypeError : public detail::KindedError<detail::kDTypeKind> {
public:
    using KindedError::KindedError;
};

}  // namespace graft
