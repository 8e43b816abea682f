// A safe, read-only view of an HDF5 file for the Keras frontend (HDF5 C API).
//
// Model files are untrusted. Every read checks the object's existence, type, rank and size
// before any allocation, and every failure becomes a graft::FormatError that names the file and
// the object path. HDF5's own error printing is silenced while a File is in use.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graft/hdf5_containment.hpp"

namespace graft::h5 {

namespace detail {
struct FileImpl;  // h5_internal.hpp
class Boxed;      // h5_box.hpp
}

/// A float32 array read from a dataset, C order.
struct FloatArray {
    std::vector<std::int64_t> shape;
    std::vector<float> data;
};

class File {
public:
    /// Opens read-only. Throws IOError if the file cannot be read, FormatError if it is not
    /// HDF5 (or is truncated/corrupt).
    static File open(const std::string& path);
    /// Opens per `box`: in this process if !box.enabled, else in the sandboxed helper
    /// graft-h5-reader (h5_box.hpp), which answers every read below; its crash, hang or
    /// resource overrun is a FormatError naming the file.
    static File open(const std::string& path, const Hdf5Containment& box);

    File(File&&) noexcept;
    File& operator=(File&&) noexcept;
    ~File();

    const std::string& path() const;

    /// True if `path` names a group (absolute, "/" is the root).
    bool has_group(const std::string& path) const;
    /// True if `path` names a dataset.
    bool has_dataset(const std::string& path) const;
    /// Names of a group's direct children (groups and datasets), in HDF5's name order.
    std::vector<std::string> children(const std::string& group) const;

    /// True if the object at `obj` has attribute `name`.
    bool has_attribute(const std::string& obj, const std::string& name) const;

    /// A string attribute: fixed- or variable-length, ASCII or UTF-8, scalar or a one-element
    /// array. nullopt if absent; FormatError if present but not a string.
    std::optional<std::string> string_attribute(const std::string& obj, const std::string& name) const;

    /// A list-of-strings attribute as Keras writes them: fixed-length NUL-padded or
    /// variable-length strings; an empty float64 array of shape (0,) means an empty list; a
    /// list too long for one attribute is split into name0, name1, ... (read and joined).
    /// nullopt if neither `name` nor `name0` exists.
    std::optional<std::vector<std::string>> string_list_attribute(const std::string& obj,
                                                                  const std::string& name) const;

    /// Reads a floating-point dataset (float16/32/64 stored; converted to float32).
    /// Checks: it exists, is a dataset, has a float class, rank <= 8, every dimension
    /// and the element count are sane (count <= max_elements) before allocating.
    /// `integers`: also accept integer datasets (converted to float; Keras preprocessing layers
    /// such as Normalization keep an int64 'count').
    FloatArray read_floats(const std::string& dataset, std::int64_t max_elements = (std::int64_t{1} << 31),
                           bool integers = false) const;

    /// Shape of a dataset without reading it.
    std::vector<std::int64_t> dataset_shape(const std::string& dataset) const;

private:
    explicit File(std::unique_ptr<detail::FileImpl> impl);
    explicit File(std::unique_ptr<detail::Boxed> boxed);
    std::unique_ptr<detail::FileImpl> impl_;
    std::unique_ptr<detail::Boxed> boxed_;  // set instead of impl_ when read out of process
};

}  // namespace graft::h5
