// A safe, read-only view of an HDF5 file (HDF5 C API). See h5_file.hpp.
//
// Model files are untrusted, so:
//  - every hid_t lives in an RAII Handle and is closed on every path, including exceptions;
//  - shapes, element counts and string sizes are checked before anything is allocated;
//  - only hard links are followed (no soft or external links), and datasets whose data lives
//    outside the file (external raw files, virtual datasets) are refused;
//  - any HDF5 failure becomes a graft::FormatError "<file>: <object>: <found>, expected <what>",
//    with HDF5's innermost error message as detail.
// The Debian HDF5 1.10 build is not thread-safe, so every HDF5 call made here runs under one
// process-wide recursive mutex.
#include "frontend/keras/h5_file.hpp"

#include <hdf5.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <string_view>
#include <system_error>
#include <utility>

#include "graft/error.hpp"

namespace graft::h5 {
namespace {

constexpr std::size_t kMaxStringBytes = std::size_t{64} << 20;     // one string attribute (model_config)
constexpr std::size_t kMaxListStringBytes = std::size_t{1} << 20;  // one element of a string list
constexpr std::size_t kMaxListBytes = std::size_t{256} << 20;      // a whole (split) string list
constexpr std::size_t kMaxListCount = std::size_t{1} << 22;        // elements of a (split) string list
constexpr int kMaxListChunks = 100000;                             // name0, name1, ...
constexpr std::size_t kMaxChildren = std::size_t{1} << 22;         // links in one group
constexpr int kMaxRank = 8;
constexpr std::uint64_t kMaxChunkBytes = std::uint64_t{64} << 20;  // chunk size allowed beyond the data size

std::recursive_mutex& hdf5_mutex() {
    static std::recursive_mutex m;
    return m;
}
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

// HDF5's innermost (most specific) error message, for a call that has just failed. The caller
// holds the mutex, so the (global, in this build) error stack is still the failed call's.
std::string hdf5_detail() {
    std::string out;
    H5Ewalk2(
        H5E_DEFAULT, H5E_WALK_UPWARD,
        [](unsigned n, const H5E_error2_t* e, void* data) -> herr_t {
            if (n == 0 && e != nullptr && e->desc != nullptr) *static_cast<std::string*>(data) = e->desc;
            return 0;
        },
        &out);
    H5Eclear2(H5E_DEFAULT);
    return out.empty() ? std::string("no detail from HDF5") : "HDF5: " + out;
}

const char* class_name(H5T_class_t c) {
    static const char* const names[] = {"an integer", "a float",   "a time",    "a string",
                                        "a bitfield", "an opaque", "a compound", "a reference",
                                        "an enum",    "a variable-length sequence", "an array"};
    return c >= 0 && c < H5T_NCLASSES ? names[c] : "an unknown-type";
}

const char* kind_name(H5I_type_t t) {
    switch (t) {
        case H5I_GROUP: return "a group";
        case H5I_DATASET: return "a dataset";
        case H5I_DATATYPE: return "a named datatype";
        default: return "an unknown object";
    }
}

// Product of `dims`, or nullopt if it does not fit in 64 bits (a zero dimension wins).
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

// An attribute's type and element count, before reading it.
struct AttrInfo {
    TypeId file_type;      // the attribute's type as stored
    TypeId elem;           // the element type (the base type if file_type is an H5T_ARRAY)
    H5T_class_t cls = H5T_NO_CLASS;  // class of `elem`
    std::uint64_t count = 0;         // dataspace points x array elements
    bool scalar = false;
    std::vector<hsize_t> array_dims;  // non-empty if file_type is an H5T_ARRAY
};

std::string describe(const AttrInfo& a) {
    if (a.scalar && a.count == 1) return fmt::format("{} value", class_name(a.cls));
    if (a.count == 0) return fmt::format("{} array with no elements", class_name(a.cls));
    if (a.count == 1) return fmt::format("{} array of 1 element", class_name(a.cls));
    return fmt::format("{} array of {} elements", class_name(a.cls), a.count);
}

// Variable-length strings live in the file's global heap. HDF5 1.10 trusts the heap IDs and
// heap collections it reads (an out-of-range object index or object size in a corrupt file
// crashes H5Aread, a bad collection size hangs it), so graft never lets HDF5 follow them:
// a no-op conversion to an opaque type of the same size (registered once, below) makes H5Aread
// return the raw 16-byte heap IDs, and Impl::vlen_string() reads the heap with checked offsets.
constexpr const char* kRawVlenTag = "graft.raw-vlen-string";

herr_t raw_vlen_conversion(hid_t src, hid_t dst, H5T_cdata_t* cdata, std::size_t, std::size_t, std::size_t, void*,
                           void*, hid_t) {
    if (cdata->command != H5T_CONV_INIT) return 0;  // CONV: same size, the bytes already are the IDs
    cdata->need_bkg = H5T_BKG_NO;
    if (H5Tget_class(dst) != H5T_OPAQUE || H5Tis_variable_str(src) <= 0 || H5Tget_size(src) != H5Tget_size(dst))
        return -1;  // not our path: the source is not an in-file vlen string of the expected size
    char* tag = H5Tget_tag(dst);
    const bool ours = tag != nullptr && std::strcmp(tag, kRawVlenTag) == 0;
    H5free_memory(tag);
    return ours ? 0 : -1;
}

std::uint64_t little_endian(const unsigned char* p, std::size_t n) {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (i >= 8 && p[i] != 0) return std::numeric_limits<std::uint64_t>::max();  // 16-byte fields
        if (i < 8) v |= std::uint64_t{p[i]} << (8 * i);
    }
    return v;
}

// Silences HDF5's automatic error printing, once per process. Call it without holding the
// mutex (the once-function takes it).
void init_hdf5() {
    static std::once_flag once;
    std::call_once(once, [] {
        Lock lock(hdf5_mutex());
        H5open();
        H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
        // Soft conversion: variable-length string (class STRING) -> our tagged opaque type.
        const hid_t str = H5Tcopy(H5T_C_S1), raw = H5Tcreate(H5T_OPAQUE, 16);
        H5Tset_size(str, H5T_VARIABLE);
        H5Tset_tag(raw, kRawVlenTag);
        H5Tregister(H5T_PERS_SOFT, "graft_raw_vlen_string", str, raw, raw_vlen_conversion);
        H5Tclose(raw);
        H5Tclose(str);
    });
}

// The Impl of a File, or graft::Error if the File was moved from.
template <typename Impl>
const Impl& live(const std::unique_ptr<Impl>& impl) {
    if (!impl) throw Error("graft::h5::File: used after being moved from");
    return *impl;
}

// One global heap collection ("GCOL", HDF5 file format spec), objects indexed with checked bounds.
struct HeapCollection {
    std::vector<unsigned char> bytes;
    std::map<std::uint64_t, std::pair<std::size_t, std::size_t>> objects;  // index -> (offset, size)
};

}  // namespace

struct File::Impl {
    std::string path;
    FileId file;
    std::size_t sizeof_addr = 8;  // byte sizes of file addresses and lengths (superblock)
    std::size_t sizeof_size = 8;
    std::uint64_t base_addr = 0;  // addresses are relative to the end of the user block

    [[noreturn]] void fail(const std::string& obj, const std::string& msg) const {
        throw FormatError(fmt::format("{}: {}: {}", path, obj, msg));
    }

    // Normalizes `p` ("a//b/./c" -> "/a/b/c", "" -> "/") and checks, one component at a time,
    // that each exists and is a hard link. (H5Lexists("/a/b") fails rather than returning false
    // if "/a" is missing or a dataset; soft and external links are never followed.)
    struct Lookup {
        std::string path;
        bool found = false;
    };
    Lookup find(const std::string& p) const {
        Lookup l;
        bool ok = p.find('\0') == std::string::npos;
        std::size_t i = 0;
        while (i <= p.size()) {
            std::size_t j = std::min(p.find('/', i), p.size());
            const std::string comp = p.substr(i, j - i);
            i = j + 1;
            if (comp.empty() || comp == ".") continue;
            l.path += "/" + comp;
            if (!ok) continue;  // keep building the path for the message
            H5L_info_t info;
            ok = H5Lexists(file.get(), l.path.c_str(), H5P_DEFAULT) > 0 &&
                 H5Lget_info(file.get(), l.path.c_str(), &info, H5P_DEFAULT) >= 0 &&
                 info.type == H5L_TYPE_HARD;
        }
        if (l.path.empty()) l.path = "/";
        l.found = ok;
        H5Eclear2(H5E_DEFAULT);
        return l;
    }

    // Opens an object whose hard links were checked by find(); a failure here is corruption.
    ObjectId open_object(const std::string& norm) const {
        ObjectId obj(H5Oopen(file.get(), norm.c_str(), H5P_DEFAULT));
        if (!obj.valid())
            fail(norm, fmt::format("cannot open the object ({}), expected a readable group or dataset; "
                                   "the file may be corrupt", hdf5_detail()));
        return obj;
    }

    // The type of the object at `p`, or H5I_BADID if it does not exist.
    H5I_type_t kind(const std::string& p) const {
        Lookup l = find(p);
        if (!l.found) return H5I_BADID;
        ObjectId obj = open_object(l.path);
        return H5Iget_type(obj.get());
    }

    ObjectId open_as(const std::string& p, H5I_type_t want, std::string& norm) const {
        Lookup l = find(p);
        norm = l.path;
        if (!l.found) fail(norm, fmt::format("missing, expected {}", kind_name(want)));
        ObjectId obj = open_object(norm);
        const H5I_type_t t = H5Iget_type(obj.get());
        if (t != want) fail(norm, fmt::format("is {}, expected {}", kind_name(t), kind_name(want)));
        return obj;
    }

    bool attr_exists(const std::string& norm, const std::string& name) const {
        if (name.empty() || name.find('\0') != std::string::npos) return false;
        const htri_t e = H5Aexists_by_name(file.get(), norm.c_str(), name.c_str(), H5P_DEFAULT);
        if (e < 0)
            fail(norm, fmt::format("cannot look up attribute \"{}\" ({}), expected a readable object header; "
                                   "the file may be corrupt", name, hdf5_detail()));
        return e > 0;
    }

    // Opens attribute `name` of `norm`, or returns an invalid handle if it does not exist.
    AttrId open_attr(const std::string& norm, const std::string& name) const {
        if (!attr_exists(norm, name)) return {};
        AttrId a(H5Aopen_by_name(file.get(), norm.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT));
        if (!a.valid())
            fail(norm, fmt::format("cannot open attribute \"{}\" ({}), expected a readable attribute; "
                                   "the file may be corrupt", name, hdf5_detail()));
        return a;
    }

    AttrInfo inspect(hid_t attr, const std::string& norm, const std::string& name) const {
        AttrInfo a;
        a.file_type = TypeId(H5Aget_type(attr));
        SpaceId space(H5Aget_space(attr));
        if (!a.file_type.valid() || !space.valid())
            fail(norm, fmt::format("attribute \"{}\" has an unreadable type or shape ({}), expected a valid "
                                   "attribute", name, hdf5_detail()));
        std::uint64_t points = 0;
        const H5S_class_t sc = H5Sget_simple_extent_type(space.get());
        if (sc == H5S_SCALAR || sc == H5S_SIMPLE) {
            const hssize_t n = H5Sget_simple_extent_npoints(space.get());
            if (n < 0) fail(norm, fmt::format("attribute \"{}\" has an unreadable shape ({}), expected a valid "
                                              "dataspace", name, hdf5_detail()));
            points = static_cast<std::uint64_t>(n);
            a.scalar = sc == H5S_SCALAR;
        } else if (sc != H5S_NULL) {
            fail(norm, fmt::format("attribute \"{}\" has an unknown dataspace ({}), expected a scalar or an "
                                   "array", name, hdf5_detail()));
        }
        std::uint64_t per = 1;
        if (H5Tget_class(a.file_type.get()) == H5T_ARRAY) {
            a.elem = TypeId(H5Tget_super(a.file_type.get()));
            const int nd = H5Tget_array_ndims(a.file_type.get());
            a.array_dims.assign(H5S_MAX_RANK, 0);
            if (!a.elem.valid() || nd < 1 || nd > H5S_MAX_RANK ||
                H5Tget_array_dims2(a.file_type.get(), a.array_dims.data()) < 0)
                fail(norm, fmt::format("attribute \"{}\" has a malformed array type ({}), expected a valid "
                                       "type", name, hdf5_detail()));
            a.array_dims.resize(static_cast<std::size_t>(nd));
            const auto p = product(a.array_dims.data(), a.array_dims.size());
            per = p ? *p : std::numeric_limits<std::uint64_t>::max();
        } else {
            a.elem = TypeId(H5Tcopy(a.file_type.get()));
            if (!a.elem.valid()) fail(norm, fmt::format("attribute \"{}\": cannot copy its type ({})", name, hdf5_detail()));
        }
        a.cls = H5Tget_class(a.elem.get());
        const std::uint64_t both[] = {points, per};
        const auto total = product(both, 2);
        a.count = total ? *total : std::numeric_limits<std::uint64_t>::max();
        return a;
    }

    [[noreturn]] void fail_attr(const std::string& norm, const std::string& name, const std::string& msg) const {
        fail(norm, fmt::format("attribute \"{}\" {}", name, msg));
    }

    // Loads the global heap collection at file address `addr`, checking it against the file.
    HeapCollection load_heap(std::uint64_t addr, const std::string& norm, const std::string& name) const {
        std::ifstream in(path, std::ios::binary | std::ios::ate);
        const std::streamoff end = in ? static_cast<std::streamoff>(in.tellg()) : -1;
        const std::uint64_t file_size = end > 0 ? static_cast<std::uint64_t>(end) : 0;
        const std::size_t hdr = 8 + sizeof_size;  // "GCOL", version, 3 reserved, collection size
        const std::uint64_t pos = base_addr + addr;
        if (addr > file_size || pos > file_size || file_size - pos < hdr)
            fail_attr(norm, name, fmt::format("refers to a global heap at byte {}, but the file has {} bytes, expected "
                                              "it inside the file; the file is truncated or corrupt", pos, file_size));
        unsigned char h[32] = {};
        in.seekg(static_cast<std::streamoff>(pos));
        in.read(reinterpret_cast<char*>(h), static_cast<std::streamsize>(hdr));
        const std::uint64_t csize = little_endian(h + 8, sizeof_size);
        if (!in || std::memcmp(h, "GCOL", 4) != 0 || h[4] != 1)
            fail_attr(norm, name, fmt::format("refers to byte {}, which holds no global heap collection, expected "
                                              "\"GCOL\" version 1; the file is corrupt", pos));
        if (csize < hdr || csize > file_size - pos || csize > kMaxStringBytes + (std::size_t{1} << 20))
            fail_attr(norm, name, fmt::format("refers to a global heap collection of {} bytes at byte {}, expected at "
                                              "most {} bytes inside the file; the file is corrupt", csize, pos,
                                              std::min(file_size - pos, std::uint64_t{kMaxStringBytes})));
        HeapCollection c;
        c.bytes.resize(static_cast<std::size_t>(csize));
        in.seekg(static_cast<std::streamoff>(pos));
        in.read(reinterpret_cast<char*>(c.bytes.data()), static_cast<std::streamsize>(csize));
        if (!in) fail_attr(norm, name, fmt::format("cannot read the global heap at byte {}, expected {} bytes", pos, csize));
        const std::size_t ohdr = 8 + sizeof_size;  // index (2), refcount (2), reserved (4), size
        for (std::size_t p = hdr; p + ohdr <= c.bytes.size();) {
            const std::uint64_t index = little_endian(&c.bytes[p], 2);
            const std::uint64_t size = little_endian(&c.bytes[p + 8], sizeof_size);
            if (index == 0) break;  // free space: the rest of the collection
            if (size > c.bytes.size() - p - ohdr)
                fail_attr(norm, name, fmt::format("refers to global heap object {} of {} bytes at byte {}, more than "
                                                  "its collection holds; the file is corrupt", index, size, pos + p));
            c.objects.emplace(index, std::make_pair(p + ohdr, static_cast<std::size_t>(size)));
            p += ohdr + static_cast<std::size_t>((size + 7) / 8 * 8);  // objects are 8-byte aligned
        }
        return c;
    }

    // The string a raw vlen heap ID (length (4), collection address, object index (4)) points to.
    std::string_view vlen_string(const unsigned char* raw, std::map<std::uint64_t, HeapCollection>& heaps,
                                 const std::string& norm, const std::string& name) const {
        const std::uint64_t len = little_endian(raw, 4);
        const std::uint64_t addr = little_endian(raw + 4, sizeof_addr);
        const std::uint64_t index = little_endian(raw + 4 + sizeof_addr, 4);
        if (len == 0) return {};
        auto heap = heaps.find(addr);
        if (heap == heaps.end()) heap = heaps.emplace(addr, load_heap(addr, norm, name)).first;
        const auto obj = heap->second.objects.find(index);
        if (obj == heap->second.objects.end())
            fail_attr(norm, name, fmt::format("refers to global heap object {} at address {}, which does not exist, "
                                              "expected a stored string; the file is corrupt", index, addr));
        if (len > obj->second.second)
            fail_attr(norm, name, fmt::format("holds a string of {} bytes in a heap object of {} bytes, expected at "
                                              "most the object size; the file is corrupt", len, obj->second.second));
        return {reinterpret_cast<const char*>(heap->second.bytes.data()) + obj->second.first,
                static_cast<std::size_t>(len)};
    }

    // Reads every string of a string attribute (a.cls == H5T_STRING) and appends them to `out`.
    // `max_each` bounds one string, `count_left`/`bytes_left` the whole list (and are reduced).
    void read_strings(hid_t attr, AttrInfo& a, const std::string& norm, const std::string& name,
                      std::size_t max_each, std::size_t& count_left, std::size_t& bytes_left,
                      std::vector<std::string>& out) const {
        auto bad = [&](const std::string& what) { fail_attr(norm, name, what); };
        if (a.count > count_left) bad(fmt::format("has {} strings, more than the limit of {}", a.count, count_left));
        const std::size_t count = static_cast<std::size_t>(a.count);
        if (count == 0) return;
        const htri_t vlen = H5Tis_variable_str(a.elem.get());
        const H5T_cset_t cset = H5Tget_cset(a.elem.get());
        // Variable-length: read raw heap IDs (see kRawVlenTag). Fixed-length: a C string memory
        // type of the same size and character set (HDF5 1.10 does not convert between ASCII and
        // UTF-8), NUL-padded, so HDF5 turns NUL-terminated or space-padded strings into NUL padding.
        const std::size_t size = vlen > 0 ? 8 + sizeof_addr : H5Tget_size(a.elem.get());
        if (vlen < 0 || cset < 0 || size == 0)
            bad(fmt::format("has a malformed string type ({}), expected a valid string type", hdf5_detail()));
        if (vlen == 0 && (size > max_each || count > bytes_left / size))
            bad(fmt::format("holds {} strings of {} bytes, more than the limit of {} bytes per string and {} in "
                            "total", count, size, max_each, bytes_left));
        TypeId elem_type(vlen > 0 ? H5Tcreate(H5T_OPAQUE, size) : H5Tcopy(H5T_C_S1));
        const bool elem_ok = elem_type.valid() && (vlen > 0 ? H5Tset_tag(elem_type.get(), kRawVlenTag) >= 0
                                                          : H5Tset_size(elem_type.get(), size) >= 0 &&
                                                                H5Tset_cset(elem_type.get(), cset) >= 0 &&
                                                                H5Tset_strpad(elem_type.get(), H5T_STR_NULLPAD) >= 0);
        TypeId array_type;
        if (elem_ok && !a.array_dims.empty())
            array_type = TypeId(H5Tarray_create2(elem_type.get(), static_cast<unsigned>(a.array_dims.size()),
                                                 a.array_dims.data()));
        if (!elem_ok || (!a.array_dims.empty() && !array_type.valid()))
            bad(fmt::format("cannot get a memory type ({}), expected a readable string", hdf5_detail()));
        const hid_t mem_type = a.array_dims.empty() ? elem_type.get() : array_type.get();

        std::vector<unsigned char> buf(count * size);
        if (H5Aread(attr, mem_type, buf.data()) < 0)
            bad(fmt::format("cannot be read ({}), expected {} strings; the file may be truncated or corrupt",
                            hdf5_detail(), vlen > 0 ? "variable-length" : "fixed-length"));
        std::map<std::uint64_t, HeapCollection> heaps;
        for (std::size_t i = 0; i < count; ++i) {
            std::string_view s;
            if (vlen > 0) {
                s = vlen_string(&buf[i * size], heaps, norm, name);
                s = s.substr(0, s.find('\0'));  // as HDF5 would return it: a C string
            } else {
                s = std::string_view(reinterpret_cast<const char*>(&buf[i * size]), size);
                while (!s.empty() && s.back() == '\0') s.remove_suffix(1);  // strip the NUL padding
            }
            if (s.size() > max_each || s.size() > bytes_left)
                bad(fmt::format("holds a string of {} bytes, more than the limit of {}", s.size(),
                                std::min(max_each, bytes_left)));
            out.emplace_back(s);
            bytes_left -= s.size();
            --count_left;
        }
    }

    // Appends one attribute's strings to a list; numeric or other empty arrays add nothing.
    void append_list(hid_t attr, const std::string& norm, const std::string& name, std::size_t& count_left,
                     std::size_t& bytes_left, std::vector<std::string>& out) const {
        AttrInfo a = inspect(attr, norm, name);
        if (a.count == 0) return;  // Keras writes an empty list as a float64 array of shape (0,)
        if (a.cls != H5T_STRING)
            fail(norm, fmt::format("attribute \"{}\" is {}, expected a list of strings", name, describe(a)));
        read_strings(attr, a, norm, name, kMaxListStringBytes, count_left, bytes_left, out);
    }

    std::vector<std::int64_t> shape_of(hid_t ds, const std::string& norm) const {
        SpaceId space(H5Dget_space(ds));
        if (!space.valid()) fail(norm, fmt::format("has an unreadable shape ({}), expected a valid dataspace", hdf5_detail()));
        const H5S_class_t sc = H5Sget_simple_extent_type(space.get());
        if (sc == H5S_SCALAR) return {};
        if (sc != H5S_SIMPLE) fail(norm, "has an empty (null) dataspace, expected a scalar or an array");
        const int rank = H5Sget_simple_extent_ndims(space.get());
        if (rank < 0) fail(norm, fmt::format("has an unreadable rank ({}), expected a valid dataspace", hdf5_detail()));
        if (rank > kMaxRank) fail(norm, fmt::format("has rank {}, expected rank 0 to {}", rank, kMaxRank));
        hsize_t dims[H5S_MAX_RANK] = {};
        if (H5Sget_simple_extent_dims(space.get(), dims, nullptr) < 0)
            fail(norm, fmt::format("has unreadable dimensions ({}), expected a valid dataspace", hdf5_detail()));
        std::vector<std::int64_t> shape;
        for (int i = 0; i < rank; ++i) {
            if (dims[i] > static_cast<hsize_t>(std::numeric_limits<std::int64_t>::max()))
                fail(norm, fmt::format("has dimension {} of size {}, expected at most 2^63-1", i, dims[i]));
            shape.push_back(static_cast<std::int64_t>(dims[i]));
        }
        return shape;
    }

    // Cheap checks before reading `n` elements of `esize` bytes: the data must be stored in this
    // file (no external raw files, no virtual datasets), contiguous data must fit in the file,
    // chunks must not be absurdly large, and every compression filter must be available.
    void check_storage(hid_t ds, const std::string& norm, const std::vector<std::int64_t>& shape, std::uint64_t n,
                       std::size_t esize) const {
        PlistId dcpl(H5Dget_create_plist(ds));
        if (!dcpl.valid()) fail(norm, fmt::format("has an unreadable layout ({}), expected a valid dataset", hdf5_detail()));
        const H5D_layout_t layout = H5Pget_layout(dcpl.get());
        if (layout == H5D_VIRTUAL)
            fail(norm, "is a virtual dataset (its data lives in other files), expected data stored in this file");
        const int external = H5Pget_external_count(dcpl.get());
        if (external != 0)
            fail(norm, fmt::format("stores its data in {} external file(s), expected data stored in this file", external));
        if (n > std::numeric_limits<std::uint64_t>::max() / esize)
            fail(norm, fmt::format("has {} elements of {} bytes, more than 2^64 bytes, expected less", n, esize));
        const std::uint64_t need = n * esize;
        if ((layout == H5D_CONTIGUOUS || layout == H5D_COMPACT) && n > 0) {
            H5D_space_status_t status{};
            if (H5Dget_space_status(ds, &status) >= 0 && status == H5D_SPACE_STATUS_NOT_ALLOCATED)
                fail(norm, fmt::format("has no stored data (never written), expected {} values", n));
            const hsize_t stored = H5Dget_storage_size(ds);  // from the layout message
            if (stored < need)
                fail(norm, fmt::format("has {} bytes of stored data, expected {} ({} elements of {} bytes); the "
                                       "file may be truncated or corrupt", stored, need, n, esize));
            const haddr_t offset = H5Dget_offset(ds);  // contiguous only
            hsize_t file_size = 0;
            if (offset != HADDR_UNDEF && H5Fget_filesize(file.get(), &file_size) >= 0 &&
                (offset > file_size || file_size - offset < need))
                fail(norm, fmt::format("has data at bytes {}..{} but the file has {} bytes, expected the data "
                                       "inside the file; the file is truncated", offset, offset + need, file_size));
        } else if (layout == H5D_CHUNKED) {
            hsize_t cdims[H5S_MAX_RANK] = {};
            const int crank = H5Pget_chunk(dcpl.get(), H5S_MAX_RANK, cdims);
            const auto celems = crank > 0 ? product(cdims, static_cast<std::size_t>(crank)) : std::nullopt;
            if (crank != static_cast<int>(shape.size()) || !celems || *celems == 0 ||
                *celems > std::max<std::uint64_t>(n, kMaxChunkBytes / esize))
                fail(norm, fmt::format("has malformed chunks (rank {}, {} elements), expected chunks of the dataset's "
                                       "rank no larger than the dataset or {} bytes", crank, celems.value_or(0),
                                       kMaxChunkBytes));
            // Keras writes every chunk; missing chunks (or a corrupt shape claiming many more
            // chunks than are stored, which HDF5 would iterate one by one) mean a broken file.
            std::uint64_t chunks = 1;
            for (std::size_t i = 0; i < shape.size(); ++i)
                chunks *= (static_cast<std::uint64_t>(shape[i]) + cdims[i] - 1) / cdims[i];  // <= n
            hsize_t stored = 0;
            SpaceId space(H5Dget_space(ds));
            if (n > 0 && H5Dget_num_chunks(ds, space.get(), &stored) < 0)
                fail(norm, fmt::format("has an unreadable chunk index ({}), expected a valid dataset; the file may "
                                       "be corrupt", hdf5_detail()));
            if (n > 0 && stored != chunks)
                fail(norm, fmt::format("has {} of its {} chunks stored, expected all of them; the file may be "
                                       "truncated or corrupt", stored, chunks));
            const int nfilters = H5Pget_nfilters(dcpl.get());
            for (int i = 0; i < nfilters; ++i) {
                unsigned flags = 0;
                std::size_t nvalues = 0;
                char fname[128] = {};
                const H5Z_filter_t id = H5Pget_filter2(dcpl.get(), static_cast<unsigned>(i), &flags, &nvalues,
                                                       nullptr, sizeof fname, fname, nullptr);
                if (id < 0) fail(norm, fmt::format("has an unreadable filter pipeline ({})", hdf5_detail()));
                if (H5Zfilter_avail(id) <= 0)
                    fail(norm, fmt::format("is compressed with filter {} (\"{}\"), which this HDF5 build cannot "
                                           "decode, expected a built-in filter such as gzip or shuffle", id, fname));
            }
        }
        H5Eclear2(H5E_DEFAULT);
    }
};

File::File(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
File::File(File&&) noexcept = default;
File& File::operator=(File&&) noexcept = default;
File::~File() = default;  // Impl's FileId closes the file under the mutex

File File::open(const std::string& path) {
    namespace fs = std::filesystem;
    init_hdf5();

    // Plain OS checks first, so a missing or unreadable file is an IOError, not a FormatError.
    if (path.empty() || path.find('\0') != std::string::npos)
        throw IOError(fmt::format("\"{}\": invalid file name, expected a path to an HDF5 file", path));
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (ec || !fs::exists(st))
        throw IOError(fmt::format("{}: cannot open ({}), expected an existing HDF5 file", path,
                                  ec ? ec.message() : "no such file"));
    if (!fs::is_regular_file(st))  // a directory, or a FIFO that would block
        throw IOError(fmt::format("{}: is {}, expected a regular HDF5 file", path,
                                  fs::is_directory(st) ? "a directory" : "not a regular file"));
    if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
        std::fclose(f);
    } else {
        const int err = errno;
        throw IOError(fmt::format("{}: cannot open for reading ({}), expected a readable HDF5 file", path,
                                  std::generic_category().message(err)));
    }

    Lock lock(hdf5_mutex());
    const htri_t is_hdf5 = H5Fis_hdf5(path.c_str());
    if (is_hdf5 == 0)
        throw FormatError(fmt::format("{}: not an HDF5 file (no HDF5 signature found), expected a Keras .h5 model",
                                      path));
    if (is_hdf5 < 0)
        throw FormatError(fmt::format("{}: not an HDF5 file ({}), expected a Keras .h5 model", path, hdf5_detail()));

    // Default fclose degree (WEAK for the sec2 driver): every object handle here is RAII-closed
    // before the file, and a STRONG degree would make H5Fopen fail ("file close degree doesn't
    // match") whenever the host process already has the same file open with the default.
    PlistId fapl(H5Pcreate(H5P_FILE_ACCESS));
    if (!fapl.valid()) throw FormatError(fmt::format("{}: cannot create an HDF5 property list ({})", path, hdf5_detail()));
#if H5_VERSION_GE(1, 10, 7)
    H5Pset_file_locking(fapl.get(), true, true);  // lock, but do not fail on filesystems without locks
#endif
    auto impl = std::make_unique<Impl>();
    impl->path = path;
    impl->file = FileId(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()));
    if (!impl->file.valid())
        throw FormatError(fmt::format("{}: /: cannot open as HDF5 ({}), expected a readable HDF5 file; the file "
                                      "may be truncated or corrupt", path, hdf5_detail()));
    PlistId fcpl(H5Fget_create_plist(impl->file.get()));
    hsize_t user_block = 0;
    if (!fcpl.valid() || H5Pget_sizes(fcpl.get(), &impl->sizeof_addr, &impl->sizeof_size) < 0 ||
        H5Pget_userblock(fcpl.get(), &user_block) < 0 || impl->sizeof_addr > 16 || impl->sizeof_size > 16)
        throw FormatError(fmt::format("{}: /: has an unreadable superblock ({}), expected a valid HDF5 file", path,
                                      hdf5_detail()));
    impl->base_addr = user_block;
    return File(std::move(impl));
}

const std::string& File::path() const {
    static const std::string empty;
    return impl_ ? impl_->path : empty;
}

bool File::has_group(const std::string& path) const {
    Lock lock(hdf5_mutex());
    const Impl& f = live(impl_);
    return f.kind(path) == H5I_GROUP;
}

bool File::has_dataset(const std::string& path) const {
    Lock lock(hdf5_mutex());
    const Impl& f = live(impl_);
    return f.kind(path) == H5I_DATASET;
}

std::vector<std::string> File::children(const std::string& group) const {
    Lock lock(hdf5_mutex());
    const Impl& f = live(impl_);
    std::string norm;
    ObjectId g = f.open_as(group, H5I_GROUP, norm);
    struct State {
        std::vector<std::string> names;
        bool too_many = false;
        bool no_memory = false;
    } state;
    // No exception may cross HDF5's C frames: the callback records problems and stops.
    auto cb = [](hid_t, const char* name, const H5L_info_t* info, void* data) -> herr_t {
        auto* s = static_cast<State*>(data);
        if (info->type != H5L_TYPE_HARD) return 0;  // soft/external links are not followed
        if (s->names.size() >= kMaxChildren) {
            s->too_many = true;
            return 1;
        }
        try {
            s->names.emplace_back(name);
        } catch (...) {
            s->no_memory = true;
            return 1;
        }
        return 0;
    };
    // Native order, then sorted here: for dense (new-style) groups, increasing name order makes
    // HDF5 1.10 build a link table, and a corrupt link makes it free uninitialized pointers.
    hsize_t idx = 0;
    if (H5Literate(g.get(), H5_INDEX_NAME, H5_ITER_NATIVE, &idx, cb, &state) < 0)
        f.fail(norm, fmt::format("cannot list the group ({}), expected a readable group; the file may be "
                                      "corrupt", hdf5_detail()));
    if (state.too_many) f.fail(norm, fmt::format("has more than {} children, expected fewer", kMaxChildren));
    if (state.no_memory) throw std::bad_alloc();
    std::sort(state.names.begin(), state.names.end());  // byte order, as HDF5's strcmp
    return std::move(state.names);
}

bool File::has_attribute(const std::string& obj, const std::string& name) const {
    Lock lock(hdf5_mutex());
    const Impl& f = live(impl_);
    const Impl::Lookup l = f.find(obj);
    return l.found && f.attr_exists(l.path, name);
}

std::optional<std::string> File::string_attribute(const std::string& obj, const std::string& name) const {
    Lock lock(hdf5_mutex());
    const Impl& f = live(impl_);
    const Impl::Lookup l = f.find(obj);
    if (!l.found) return std::nullopt;
    AttrId attr = f.open_attr(l.path, name);
    if (!attr.valid()) return std::nullopt;
    AttrInfo a = f.inspect(attr.get(), l.path, name);
    if (a.cls != H5T_STRING)
        f.fail(l.path, fmt::format("attribute \"{}\" is {}, expected a string", name, describe(a)));
    if (a.count != 1)
        f.fail(l.path, fmt::format("attribute \"{}\" is {}, expected a single string", name, describe(a)));
    std::size_t count_left = 1, bytes_left = kMaxStringBytes;
    std::vector<std::string> out;
    f.read_strings(attr.get(), a, l.path, name, kMaxStringBytes, count_left, bytes_left, out);
    return std::move(out.front());
}

std::optional<std::vector<std::string>> File::string_list_attribute(const std::string& obj,
                                                                    const std::string& name) const {
    Lock lock(hdf5_mutex());
    const Impl& f = live(impl_);
    const Impl::Lookup l = f.find(obj);
    if (!l.found) return std::nullopt;
    std::size_t count_left = kMaxListCount, bytes_left = kMaxListBytes;
    std::vector<std::string> out;
    if (AttrId attr = f.open_attr(l.path, name); attr.valid()) {
        f.append_list(attr.get(), l.path, name, count_left, bytes_left, out);
        return out;
    }
    // Keras splits a list too large for one attribute into name0, name1, ... (read until one is missing).
    int chunk = 0;
    for (; chunk < kMaxListChunks; ++chunk) {
        const std::string part = name + std::to_string(chunk);
        AttrId attr = f.open_attr(l.path, part);
        if (!attr.valid()) break;
        f.append_list(attr.get(), l.path, part, count_left, bytes_left, out);
    }
    if (chunk == 0) return std::nullopt;
    if (chunk == kMaxListChunks && f.attr_exists(l.path, name + std::to_string(chunk)))
        f.fail(l.path, fmt::format("attribute \"{}\" is split into more than {} parts, expected fewer", name,
                                        kMaxListChunks));
    return out;
}

FloatArray File::read_floats(const std::string& dataset, std::int64_t max_elements, bool integers) const {
    Lock lock(hdf5_mutex());
    const Impl& f = live(impl_);
    std::string norm;
    ObjectId ds = f.open_as(dataset, H5I_DATASET, norm);
    TypeId type(H5Dget_type(ds.get()));
    if (!type.valid()) f.fail(norm, fmt::format("has an unreadable type ({}), expected float data", hdf5_detail()));
    const H5T_class_t cls = H5Tget_class(type.get());
    if (cls != H5T_FLOAT && !(integers && cls == H5T_INTEGER))
        f.fail(norm, fmt::format("holds {} type, expected float16, float32 or float64 data", class_name(cls)));
    const std::size_t esize = H5Tget_size(type.get());
    if (esize == 0 || esize > 16)
        f.fail(norm, fmt::format("holds floats of {} bytes, expected 2, 4 or 8 bytes", esize));

    FloatArray out;
    out.shape = f.shape_of(ds.get(), norm);
    const auto n = product(out.shape.data(), out.shape.size());
    const std::uint64_t limit = static_cast<std::uint64_t>(std::max<std::int64_t>(max_elements, 0));
    if (!n) f.fail(norm, fmt::format("has more than 2^64 elements, more than the limit of {}", limit));
    if (*n > limit) f.fail(norm, fmt::format("has {} elements, more than the limit of {}", *n, limit));
    f.check_storage(ds.get(), norm, out.shape, *n, esize);

    out.data.resize(static_cast<std::size_t>(*n));
    // H5T_NATIVE_FLOAT as memory type: HDF5 converts float16/float64 (overflow becomes +-inf).
    if (*n > 0 && H5Dread(ds.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data.data()) < 0)
        f.fail(norm, fmt::format("cannot read data ({}), expected {} float values; the file may be truncated "
                                      "or corrupt", hdf5_detail(), *n));
    return out;
}

std::vector<std::int64_t> File::dataset_shape(const std::string& dataset) const {
    Lock lock(hdf5_mutex());
    const Impl& f = live(impl_);
    std::string norm;
    ObjectId ds = f.open_as(dataset, H5I_DATASET, norm);
    return f.shape_of(ds.get(), norm);
}

}  // namespace graft::h5
