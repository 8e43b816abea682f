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

/// A model or data file is malformed: not HDF5, truncated, bad JSON, a missing or misshapen weight.
class FormatError : public Error {
public:
    using Error::Error;
    const char* kind() const noexcept override { return "format"; }
};

/// The model is well formed but uses something graft cannot run (a layer class, an option).
class UnsupportedError : public Error {
public:
    using Error::Error;
    const char* kind() const noexcept override { return "unsupported"; }
};

/// Shapes or orders disagree: a weight with the wrong shape, an input of the wrong size.
class ShapeError : public Error {
public:
    using Error::Error;
    const char* kind() const noexcept override { return "shape"; }
};

/// A graph breaks an IR invariant (dangling variable, cycle, duplicate name).
class GraphError : public Error {
public:
    using Error::Error;
    const char* kind() const noexcept override { return "graph"; }
};

/// A plugin could not be loaded or registered.
class PluginError : public Error {
public:
    using Error::Error;
    const char* kind() const noexcept override { return "plugin"; }
};

/// A registry key (op type, converter, generator) is already taken or missing.
class RegistryError : public Error {
public:
    using Error::Error;
    const char* kind() const noexcept override { return "registry"; }
};

/// Input or output I/O failed (cannot open, cannot write, rename failed).
class IOError : public Error {
public:
    using Error::Error;
    const char* kind() const noexcept override { return "io"; }
};

}  // namespace graft
