// What the parts of graft::h5::File share (private to h5_file.cpp, h5_attributes.cpp and
// h5_datasets.cpp): the process-wide HDF5 mutex, RAII handles, HDF5 error details, and the open
// file with its object lookup (FileImpl). See h5_file.cpp for the safety rules all parts follow.
#pragma once

#include <hdf5.h>

#include <fmt/format.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "frontend/keras/h5_file.hpp"
#include "graft/error.hpp"

namespace graft::h5::detail {

/// Every HDF5 call runs under this (the Debian HDF5 1.10 build is not thread-safe).
std::recursive_mutex& hdf5_mutex();
using Lock = std::lock_guard<std::recursive_mutex>;

/// Owns one hid_t and closes it with `Close` (under the HDF5 mutex).
template <herr_t (*Close)(hid_t)>
class Handle {
public:
    Handle() = default;
    explicit Handle(hid_t id) : id_(id) {}
    Handle(Handle&& o) noexcept : id_(std::exchange(o.id_, H5I_INVALID_HID)) {}
    Handle& operator=(Handle&& o) noexcept {
        if (this != &o) {
            reset();
            id_ = std::exchange(o.id_, H5I_INVALID_HID);
        }
        return *this;
    }
    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;
    ~Handle() { reset(); }

    void reset() noexcept {
        if (id_ >= 0) {
            Lock lock(hdf5_mutex());
            Close(id_);
        }
        id_ = H5I_INVALID_HID;
    }
    hid_t get() const { return id_; }
    bool valid() const { return id_ >= 0; }

private:
    hid_t id_ = H5I_INVALID_HID;
};

using FileId = Handle<H5Fclose>;
using ObjectId = Handle<H5Oclose>;  // groups and datasets opened with H5Oopen
using AttrId = Handle<H5Aclose>;
using TypeId = Handle<H5Tclose>;
using SpaceId = Handle<H5Sclose>;
using PlistId = Handle<H5Pclose>;

/// HDF5's innermost (most specific) error message, for a call that has just failed. The caller
/// holds the mutex, so the (global, in this build) error stack is still the failed call's.
std::string hdf5_detail();

/// "an integer", "a float", ... for messages.
const char* class_name(H5T_class_t c);

/// Product of `dims`, or nullopt if it does not fit in 64 bits (a zero dimension wins).
template <typename T>
std::optional<std::uint64_t> product(const T* dims, std::size_t n) {
    std::uint64_t p = 1;
    bool overflow = false;
    for (std::size_t i = 0; i < n; ++i) {
        const auto d = static_cast<std::uint64_t>(dims[i]);
        if (d == 0) return 0;
        if (p > std::numeric_limits<std::uint64_t>::max() / d) overflow = true;
        else p *= d;
    }
    if (overflow) return std::nullopt;
    return p;
}

/// Registers the conversion that makes H5Aread return variable-length strings as raw heap IDs
/// (h5_attributes.cpp). Called once, with the mutex held, when HDF5 is initialised.
void register_raw_vlen_strings();

/// An open file: what every part reads through.
struct FileImpl {
    std::string path;
    FileId file;
    std::size_t sizeof_addr = 8;  // byte sizes of file addresses and lengths (superblock)
    std::size_t sizeof_size = 8;
    std::uint64_t base_addr = 0;  // addresses are relative to the end of the user block

    [[noreturn]] void fail(const std::string& obj, const std::string& msg) const {
        throw FormatError(fmt::format("{}: {}: {}", path, obj, msg));
    }

    /// Normalizes `p` ("a//b/./c" -> "/a/b/c", "" -> "/") and checks, one component at a time,
    /// that each exists and is a hard link. (H5Lexists("/a/b") fails rather than returning false
    /// if "/a" is missing or a dataset; soft and external links are never followed.)
    struct Lookup {
        std::string path;
        bool found = false;
    };
    Lookup find(const std::string& p) const;

    /// Opens an object whose hard links were checked by find(); a failure here is corruption.
    ObjectId open_object(const std::string& norm) const;

    /// The type of the object at `p`, or H5I_BADID if it does not exist.
    H5I_type_t kind(const std::string& p) const;

    /// Opens the object at `p`, which must be of type `want`; `norm` receives its normalized path.
    ObjectId open_as(const std::string& p, H5I_type_t want, std::string& norm) const;
};

/// The FileImpl of a File, or graft::Error if the File was moved from.
inline const FileImpl& live(const std::unique_ptr<FileImpl>& impl) {
    if (!impl) throw Error("graft::h5::File: used after being moved from");
    return *impl;
}

}  // namespace graft::h5::detail
