// graft::h5::File, attributes: strings and lists of strings as Keras writes them (model_config,
// layer_names, weight_names). See h5_file.cpp for the safety rules.
//
// Variable-length strings are never read through HDF5's own heap code (see kRawVlenTag): their
// global heap collections are parsed here, with every offset and size checked against the file.
#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <string_view>
#include <vector>

#include "frontend/keras/h5_box.hpp"
#include "frontend/keras/h5_internal.hpp"

namespace graft::h5 {
namespace detail {
namespace {

constexpr std::size_t kMaxStringBytes = std::size_t{64} << 20;     // one string attribute (model_config)
constexpr std::size_t kMaxListStringBytes = std::size_t{1} << 20;  // one element of a string list
constexpr std::size_t kMaxListBytes = std::size_t{256} << 20;      // a whole (split) string list
constexpr std::size_t kMaxListCount = std::size_t{1} << 22;        // elements of a (split) string list
constexpr int kMaxListChunks = 100000;                             // name0, name1, ...

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
// a no-op conversion to an opaque type of the same size (register_raw_vlen_strings(), below) makes
// H5Aread return the raw 16-byte heap IDs, and vlen_string() reads the heap with checked offsets.
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

// One global heap collection ("GCOL", HDF5 file format spec), objects indexed with checked bounds.
struct HeapCollection {
    std::vector<unsigned char> bytes;
    std::map<std::uint64_t, std::pair<std::size_t, std::size_t>> objects;  // index -> (offset, size)
};

bool attr_exists(const FileImpl& f, const std::string& norm, const std::string& name) {
    if (name.empty() || name.find('\0') != std::string::npos) return false;
    const htri_t e = H5Aexists_by_name(f.file.get(), norm.c_str(), name.c_str(), H5P_DEFAULT);
    if (e < 0)
        f.fail(norm, fmt::format("cannot look up attribute \"{}\" ({}), expected a readable object header; "
                                 "the file may be corrupt", name, hdf5_detail()));
    return e > 0;
}

// Opens attribute `name` of `norm`, or returns an invalid handle if it does not exist.
AttrId open_attr(const FileImpl& f, const std::string& norm, const std::string& name) {
    if (!attr_exists(f, norm, name)) return {};
    AttrId a(H5Aopen_by_name(f.file.get(), norm.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT));
    if (!a.valid())
        f.fail(norm, fmt::format("cannot open attribute \"{}\" ({}), expected a readable attribute; "
                                 "the file may be corrupt", name, hdf5_detail()));
    return a;
}

AttrInfo inspect(const FileImpl& f, hid_t attr, const std::string& norm, const std::string& name) {
    AttrInfo a;
    a.file_type = TypeId(H5Aget_type(attr));
    SpaceId space(H5Aget_space(attr));
    if (!a.file_type.valid() || !space.valid())
        f.fail(norm, fmt::format("attribute \"{}\" has an unreadable type or shape ({}), expected a valid "
                                 "attribute", name, hdf5_detail()));
    std::uint64_t points = 0;
    const H5S_class_t sc = H5Sget_simple_extent_type(space.get());
    if (sc == H5S_SCALAR || sc == H5S_SIMPLE) {
        const hssize_t n = H5Sget_simple_extent_npoints(space.get());
        if (n < 0) f.fail(norm, fmt::format("attribute \"{}\" has an unreadable shape ({}), expected a valid "
                                            "dataspace", name, hdf5_detail()));
        points = static_cast<std::uint64_t>(n);
        a.scalar = sc == H5S_SCALAR;
    } else if (sc != H5S_NULL) {
        f.fail(norm, fmt::format("attribute \"{}\" has an unknown dataspace ({}), expected a scalar or an "
                                 "array", name, hdf5_detail()));
    }
    std::uint64_t per = 1;
    if (H5Tget_class(a.file_type.get()) == H5T_ARRAY) {
        a.elem = TypeId(H5Tget_super(a.file_type.get()));
        const int nd = H5Tget_array_ndims(a.file_type.get());
        a.array_dims.assign(H5S_MAX_RANK, 0);
        if (!a.elem.valid() || nd < 1 || nd > H5S_MAX_RANK ||
            H5Tget_array_dims2(a.file_type.get(), a.array_dims.data()) < 0)
            f.fail(norm, fmt::format("attribute \"{}\" has a malformed array type ({}), expected a valid "
                                     "type", name, hdf5_detail()));
        a.array_dims.resize(static_cast<std::size_t>(nd));
        const auto p = product(a.array_dims.data(), a.array_dims.size());
        per = p ? *p : std::numeric_limits<std::uint64_t>::max();
    } else {
        a.elem = TypeId(H5Tcopy(a.file_type.get()));
        if (!a.elem.valid()) f.fail(norm, fmt::format("attribute \"{}\": cannot copy its type ({})", name, hdf5_detail()));
    }
    a.cls = H5Tget_class(a.elem.get());
    const std::uint64_t both[] = {points, per};
    const auto total = product(both, 2);
    a.count = total ? *total : std::numeric_limits<std::uint64_t>::max();
    return a;
}

[[noreturn]] void fail_attr(const FileImpl& f, const std::string& norm, const std::string& name,
                            const std::string& msg) {
    f.fail(norm, fmt::format("attribute \"{}\" {}", name, msg));
}

// Loads the global heap collection at file address `addr`, checking it against the file.
HeapCollection load_heap(const FileImpl& f, std::uint64_t addr, const std::string& norm,
                         const std::string& name) {
    std::ifstream in(f.path, std::ios::binary | std::ios::ate);
    const std::streamoff end = in ? static_cast<std::streamoff>(in.tellg()) : -1;
    const std::uint64_t file_size = end > 0 ? static_cast<std::uint64_t>(end) : 0;
    const std::size_t hdr = 8 + f.sizeof_size;  // "GCOL", version, 3 reserved, collection size
    const std::uint64_t pos = f.base_addr + addr;
    if (addr > file_size || pos > file_size || file_size - pos < hdr)
        fail_attr(f, norm, name, fmt::format("refers to a global heap at byte {}, but the file has {} bytes, expected "
                                             "it inside the file; the file is truncated or corrupt", pos, file_size));
    unsigned char h[32] = {};
    in.seekg(static_cast<std::streamoff>(pos));
    in.read(reinterpret_cast<char*>(h), static_cast<std::streamsize>(hdr));
    const std::uint64_t csize = little_endian(h + 8, f.sizeof_size);
    if (!in || std::memcmp(h, "GCOL", 4) != 0 || h[4] != 1)
        fail_attr(f, norm, name, fmt::format("refers to byte {}, which holds no global heap collection, expected "
                                             "\"GCOL\" version 1; the file is corrupt", pos));
    if (csize < hdr || csize > file_size - pos || csize > kMaxStringBytes + (std::size_t{1} << 20))
        fail_attr(f, norm, name, fmt::format("refers to a global heap collection of {} bytes at byte {}, expected at "
                                             "most {} bytes inside the file; the file is corrupt", csize, pos,
                                             std::min(file_size - pos, std::uint64_t{kMaxStringBytes})));
    HeapCollection c;
    c.bytes.resize(static_cast<std::size_t>(csize));
    in.seekg(static_cast<std::streamoff>(pos));
    in.read(reinterpret_cast<char*>(c.bytes.data()), static_cast<std::streamsize>(csize));
    if (!in) fail_attr(f, norm, name, fmt::format("cannot read the global heap at byte {}, expected {} bytes", pos, csize));
    const std::size_t ohdr = 8 + f.sizeof_size;  // index (2), refcount (2), reserved (4), size
    for (std::size_t p = hdr; p + ohdr <= c.bytes.size();) {
        const std::uint64_t index = little_endian(&c.bytes[p], 2);
        const std::uint64_t size = little_endian(&c.bytes[p + 8], f.sizeof_size);
        if (index == 0) break;  // free space: the rest of the collection
        if (size > c.bytes.size() - p - ohdr)
            fail_attr(f, norm, name, fmt::format("refers to global heap object {} of {} bytes at byte {}, more than "
                                                 "its collection holds; the file is corrupt", index, size, pos + p));
        c.objects.emplace(index, std::make_pair(p + ohdr, static_cast<std::size_t>(size)));
        p += ohdr + static_cast<std::size_t>((size + 7) / 8 * 8);  // objects are 8-byte aligned
    }
    return c;
}

// The string a raw vlen heap ID (length (4), collection address, object index (4)) points to.
std::string_view vlen_string(const FileImpl& f, const unsigned char* raw,
                             std::map<std::uint64_t, HeapCollection>& heaps, const std::string& norm,
                             const std::string& name) {
    const std::uint64_t len = little_endian(raw, 4);
    const std::uint64_t addr = little_endian(raw + 4, f.sizeof_addr);
    const std::uint64_t index = little_endian(raw + 4 + f.sizeof_addr, 4);
    if (len == 0) return {};
    auto heap = heaps.find(addr);
    if (heap == heaps.end()) heap = heaps.emplace(addr, load_heap(f, addr, norm, name)).first;
    const auto obj = heap->second.objects.find(index);
    if (obj == heap->second.objects.end())
        fail_attr(f, norm, name, fmt::format("refers to global heap object {} at address {}, which does not exist, "
                                             "expected a stored string; the file is corrupt", index, addr));
    if (len > obj->second.second)
        fail_attr(f, norm, name, fmt::format("holds a string of {} bytes in a heap object of {} bytes, expected at "
                                             "most the object size; the file is corrupt", len, obj->second.second));
    return {reinterpret_cast<const char*>(heap->second.bytes.data()) + obj->second.first,
            static_cast<std::size_t>(len)};
}

// Reads every string of a string attribute (a.cls == H5T_STRING) and appends them to `out`.
// `max_each` bounds one string, `count_left`/`bytes_left` the whole list (and are reduced).
void read_strings(const FileImpl& f, hid_t attr, AttrInfo& a, const std::string& norm, const std::string& name,
                  std::size_t max_each, std::size_t& count_left, std::size_t& bytes_left,
                  std::vector<std::string>& out) {
    auto bad = [&](const std::string& what) { fail_attr(f, norm, name, what); };
    if (a.count > count_left) bad(fmt::format("has {} strings, more than the limit of {}", a.count, count_left));
    const std::size_t count = static_cast<std::size_t>(a.count);
    if (count == 0) return;
    const htri_t vlen = H5Tis_variable_str(a.elem.get());
    const H5T_cset_t cset = H5Tget_cset(a.elem.get());
    // Variable-length: read raw heap IDs (see kRawVlenTag). Fixed-length: a C string memory
    // type of the same size and character set (HDF5 1.10 does not convert between ASCII and
    // UTF-8), NUL-padded, so HDF5 turns NUL-terminated or space-padded strings into NUL padding.
    const std::size_t size = vlen > 0 ? 8 + f.sizeof_addr : H5Tget_size(a.elem.get());
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
            s = vlen_string(f, &buf[i * size], heaps, norm, name);
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
void append_list(const FileImpl& f, hid_t attr, const std::string& norm, const std::string& name,
                 std::size_t& count_left, std::size_t& bytes_left, std::vector<std::string>& out) {
    AttrInfo a = inspect(f, attr, norm, name);
    if (a.count == 0) return;  // Keras writes an empty list as a float64 array of shape (0,)
    if (a.cls != H5T_STRING)
        f.fail(norm, fmt::format("attribute \"{}\" is {}, expected a list of strings", name, describe(a)));
    read_strings(f, attr, a, norm, name, kMaxListStringBytes, count_left, bytes_left, out);
}

}  // namespace

void register_raw_vlen_strings() {
    // Soft conversion: variable-length string (class STRING) -> our tagged opaque type.
    const hid_t str = H5Tcopy(H5T_C_S1), raw = H5Tcreate(H5T_OPAQUE, 16);
    H5Tset_size(str, H5T_VARIABLE);
    H5Tset_tag(raw, kRawVlenTag);
    H5Tregister(H5T_PERS_SOFT, "graft_raw_vlen_string", str, raw, raw_vlen_conversion);
    H5Tclose(raw);
    H5Tclose(str);
}

}  // namespace detail

using namespace detail;

bool File::has_attribute(const std::string& obj, const std::string& name) const {
    if (boxed_) return boxed_->has_attribute(obj, name);
    Lock lock(hdf5_mutex());
    const FileImpl& f = live(impl_);
    const FileImpl::Lookup l = f.find(obj);
    return l.found && attr_exists(f, l.path, name);
}

std::optional<std::string> File::string_attribute(const std::string& obj, const std::string& name) const {
    if (boxed_) return boxed_->string_attribute(obj, name);
    Lock lock(hdf5_mutex());
    const FileImpl& f = live(impl_);
    const FileImpl::Lookup l = f.find(obj);
    if (!l.found) return std::nullopt;
    AttrId attr = open_attr(f, l.path, name);
    if (!attr.valid()) return std::nullopt;
    AttrInfo a = inspect(f, attr.get(), l.path, name);
    if (a.cls != H5T_STRING)
        f.fail(l.path, fmt::format("attribute \"{}\" is {}, expected a string", name, describe(a)));
    if (a.count != 1)
        f.fail(l.path, fmt::format("attribute \"{}\" is {}, expected a single string", name, describe(a)));
    std::size_t count_left = 1, bytes_left = kMaxStringBytes;
    std::vector<std::string> out;
    read_strings(f, attr.get(), a, l.path, name, kMaxStringBytes, count_left, bytes_left, out);
    return std::move(out.front());
}

std::optional<std::vector<std::string>> File::string_list_attribute(const std::string& obj,
                                                                    const std::string& name) const {
    if (boxed_) return boxed_->string_list_attribute(obj, name);
    Lock lock(hdf5_mutex());
    const FileImpl& f = live(impl_);
    const FileImpl::Lookup l = f.find(obj);
    if (!l.found) return std::nullopt;
    std::size_t count_left = kMaxListCount, bytes_left = kMaxListBytes;
    std::vector<std::string> out;
    if (AttrId attr = open_attr(f, l.path, name); attr.valid()) {
        append_list(f, attr.get(), l.path, name, count_left, bytes_left, out);
        return out;
    }
    // Keras splits a list too large for one attribute into name0, name1, ... (read until one is missing).
    int chunk = 0;
    for (; chunk < kMaxListChunks; ++chunk) {
        const std::string part = name + std::to_string(chunk);
        AttrId attr = open_attr(f, l.path, part);
        if (!attr.valid()) break;
        append_list(f, attr.get(), l.path, part, count_left, bytes_left, out);
    }
    if (chunk == 0) return std::nullopt;
    if (chunk == kMaxListChunks && attr_exists(f, l.path, name + std::to_string(chunk)))
        f.fail(l.path, fmt::format("attribute \"{}\" is split into more than {} parts, expected fewer", name,
                                   kMaxListChunks));
    return out;
}

}  // namespace graft::h5
