// A safe, read-only view of an HDF5 file (HDF5 C API). See h5_file.hpp. This part opens the
// file and walks its object tree; h5_attributes.cpp reads attributes, h5_datasets.cpp datasets.
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
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "frontend/keras/h5_box.hpp"
#include "frontend/keras/h5_internal.hpp"

namespace graft::h5 {
namespace detail {

std::recursive_mutex& hdf5_mutex() {
    static std::recursive_mutex m;
    return m;
}

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

namespace {

const char* kind_name(H5I_type_t t) {
    switch (t) {
        case H5I_GROUP: return "a group";
        case H5I_DATASET: return "a dataset";
        case H5I_DATATYPE: return "a named datatype";
        default: return "an unknown object";
    }
}

}  // namespace

FileImpl::Lookup FileImpl::find(const std::string& p) const {
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

ObjectId FileImpl::open_object(const std::string& norm) const {
    ObjectId obj(H5Oopen(file.get(), norm.c_str(), H5P_DEFAULT));
    if (!obj.valid())
        fail(norm, fmt::format("cannot open the object ({}), expected a readable group or dataset; "
                               "the file may be corrupt", hdf5_detail()));
    return obj;
}

H5I_type_t FileImpl::kind(const std::string& p) const {
    Lookup l = find(p);
    if (!l.found) return H5I_BADID;
    ObjectId obj = open_object(l.path);
    return H5Iget_type(obj.get());
}

ObjectId FileImpl::open_as(const std::string& p, H5I_type_t want, std::string& norm) const {
    Lookup l = find(p);
    norm = l.path;
    if (!l.found) fail(norm, fmt::format("missing, expected {}", kind_name(want)));
    ObjectId obj = open_object(norm);
    const H5I_type_t t = H5Iget_type(obj.get());
    if (t != want) fail(norm, fmt::format("is {}, expected {}", kind_name(t), kind_name(want)));
    return obj;
}

}  // namespace detail

using namespace detail;

namespace {

constexpr std::size_t kMaxChildren = std::size_t{1} << 22;  // links in one group

// Silences HDF5's automatic error printing and registers the raw vlen-string conversion, once
// per process. Call it without holding the mutex (the once-function takes it).
void init_hdf5() {
    static std::once_flag once;
    std::call_once(once, [] {
        Lock lock(hdf5_mutex());
        H5open();
        H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
        register_raw_vlen_strings();
    });
}

}  // namespace

File::File(std::unique_ptr<FileImpl> impl) : impl_(std::move(impl)) {}
File::File(std::unique_ptr<Boxed> boxed) : boxed_(std::move(boxed)) {}
File::File(File&&) noexcept = default;
File& File::operator=(File&&) noexcept = default;
File::~File() = default;  // FileImpl's FileId closes the file under the mutex

File File::open(const std::string& path, const Hdf5Containment& box) {
    if (!box.enabled) return open(path);
    return File(std::make_unique<Boxed>(path, box));
}

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
    auto impl = std::make_unique<FileImpl>();
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
    if (boxed_) return boxed_->path();
    return impl_ ? impl_->path : empty;
}

bool File::has_group(const std::string& path) const {
    if (boxed_) return boxed_->has_group(path);
    Lock lock(hdf5_mutex());
    const FileImpl& f = live(impl_);
    return f.kind(path) == H5I_GROUP;
}

bool File::has_dataset(const std::string& path) const {
    if (boxed_) return boxed_->has_dataset(path);
    Lock lock(hdf5_mutex());
    const FileImpl& f = live(impl_);
    return f.kind(path) == H5I_DATASET;
}

std::vector<std::string> File::children(const std::string& group) const {
    if (boxed_) return boxed_->children(group);
    Lock lock(hdf5_mutex());
    const FileImpl& f = live(impl_);
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

}  // namespace graft::h5
