// graft::h5::File, datasets: shapes, and float data read after checking where and how it is
// stored (no external or virtual storage, data inside the file, sane chunks, available filters).
// See h5_file.cpp for the safety rules.
#include <algorithm>
#include <vector>

#include "frontend/keras/h5_box.hpp"
#include "frontend/keras/h5_internal.hpp"

namespace graft::h5 {
namespace detail {
namespace {

constexpr int kMaxRank = 8;
constexpr std::uint64_t kMaxChunkBytes = std::uint64_t{64} << 20;  // chunk size allowed beyond the data size

std::vector<std::int64_t> shape_of(const FileImpl& f, hid_t ds, const std::string& norm) {
    SpaceId space(H5Dget_space(ds));
    if (!space.valid()) f.fail(norm, fmt::format("has an unreadable shape ({}), expected a valid dataspace", hdf5_detail()));
    const H5S_class_t sc = H5Sget_simple_extent_type(space.get());
    if (sc == H5S_SCALAR) return {};
    if (sc != H5S_SIMPLE) f.fail(norm, "has an empty (null) dataspace, expected a scalar or an array");
    const int rank = H5Sget_simple_extent_ndims(space.get());
    if (rank < 0) f.fail(norm, fmt::format("has an unreadable rank ({}), expected a valid dataspace", hdf5_detail()));
    if (rank > kMaxRank) f.fail(norm, fmt::format("has rank {}, expected rank 0 to {}", rank, kMaxRank));
    hsize_t dims[H5S_MAX_RANK] = {};
    if (H5Sget_simple_extent_dims(space.get(), dims, nullptr) < 0)
        f.fail(norm, fmt::format("has unreadable dimensions ({}), expected a valid dataspace", hdf5_detail()));
    std::vector<std::int64_t> shape;
    for (int i = 0; i < rank; ++i) {
        if (dims[i] > static_cast<hsize_t>(std::numeric_limits<std::int64_t>::max()))
            f.fail(norm, fmt::format("has dimension {} of size {}, expected at most 2^63-1", i, dims[i]));
        shape.push_back(static_cast<std::int64_t>(dims[i]));
    }
    return shape;
}

// Cheap checks before reading `n` elements of `esize` bytes: the data must be stored in this
// file (no external raw files, no virtual datasets), contiguous data must fit in the file,
// chunks must not be absurdly large, and every compression filter must be available.
void check_storage(const FileImpl& f, hid_t ds, const std::string& norm, const std::vector<std::int64_t>& shape,
                   std::uint64_t n, std::size_t esize) {
    PlistId dcpl(H5Dget_create_plist(ds));
    if (!dcpl.valid()) f.fail(norm, fmt::format("has an unreadable layout ({}), expected a valid dataset", hdf5_detail()));
    const H5D_layout_t layout = H5Pget_layout(dcpl.get());
    if (layout == H5D_VIRTUAL)
        f.fail(norm, "is a virtual dataset (its data lives in other files), expected data stored in this file");
    const int external = H5Pget_external_count(dcpl.get());
    if (external != 0)
        f.fail(norm, fmt::format("stores its data in {} external file(s), expected data stored in this file", external));
    if (n > std::numeric_limits<std::uint64_t>::max() / esize)
        f.fail(norm, fmt::format("has {} elements of {} bytes, more than 2^64 bytes, expected less", n, esize));
    const std::uint64_t need = n * esize;
    if ((layout == H5D_CONTIGUOUS || layout == H5D_COMPACT) && n > 0) {
        H5D_space_status_t status{};
        if (H5Dget_space_status(ds, &status) >= 0 && status == H5D_SPACE_STATUS_NOT_ALLOCATED)
            f.fail(norm, fmt::format("has no stored data (never written), expected {} values", n));
        const hsize_t stored = H5Dget_storage_size(ds);  // from the layout message
        if (stored < need)
            f.fail(norm, fmt::format("has {} bytes of stored data, expected {} ({} elements of {} bytes); the "
                                     "file may be truncated or corrupt", stored, need, n, esize));
        const haddr_t offset = H5Dget_offset(ds);  // contiguous only
        hsize_t file_size = 0;
        if (offset != HADDR_UNDEF && H5Fget_filesize(f.file.get(), &file_size) >= 0 &&
            (offset > file_size || file_size - offset < need))
            f.fail(norm, fmt::format("has data at bytes {}..{} but the file has {} bytes, expected the data "
                                     "inside the file; the file is truncated", offset, offset + need, file_size));
    } else if (layout == H5D_CHUNKED) {
        hsize_t cdims[H5S_MAX_RANK] = {};
        const int crank = H5Pget_chunk(dcpl.get(), H5S_MAX_RANK, cdims);
        const auto celems = crank > 0 ? product(cdims, static_cast<std::size_t>(crank)) : std::nullopt;
        if (crank != static_cast<int>(shape.size()) || !celems || *celems == 0 ||
            *celems > std::max<std::uint64_t>(n, kMaxChunkBytes / esize))
            f.fail(norm, fmt::format("has malformed chunks (rank {}, {} elements), expected chunks of the dataset's "
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
            f.fail(norm, fmt::format("has an unreadable chunk index ({}), expected a valid dataset; the file may "
                                     "be corrupt", hdf5_detail()));
        if (n > 0 && stored != chunks)
            f.fail(norm, fmt::format("has {} of its {} chunks stored, expected all of them; the file may be "
                                     "truncated or corrupt", stored, chunks));
        const int nfilters = H5Pget_nfilters(dcpl.get());
        for (int i = 0; i < nfilters; ++i) {
            unsigned flags = 0;
            std::size_t nvalues = 0;
            char fname[128] = {};
            const H5Z_filter_t id = H5Pget_filter2(dcpl.get(), static_cast<unsigned>(i), &flags, &nvalues,
                                                   nullptr, sizeof fname, fname, nullptr);
            if (id < 0) f.fail(norm, fmt::format("has an unreadable filter pipeline ({})", hdf5_detail()));
            if (H5Zfilter_avail(id) <= 0)
                f.fail(norm, fmt::format("is compressed with filter {} (\"{}\"), which this HDF5 build cannot "
                                         "decode, expected a built-in filter such as gzip or shuffle", id, fname));
        }
    }
    H5Eclear2(H5E_DEFAULT);
}

}  // namespace
}  // namespace detail

using namespace detail;

FloatArray File::read_floats(const std::string& dataset, std::int64_t max_elements, bool integers) const {
    if (boxed_) return boxed_->read_floats(dataset, max_elements, integers);
    Lock lock(hdf5_mutex());
    const FileImpl& f = live(impl_);
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
    out.shape = shape_of(f, ds.get(), norm);
    const auto n = product(out.shape.data(), out.shape.size());
    const std::uint64_t limit = static_cast<std::uint64_t>(std::max<std::int64_t>(max_elements, 0));
    if (!n) f.fail(norm, fmt::format("has more than 2^64 elements, more than the limit of {}", limit));
    if (*n > limit) f.fail(norm, fmt::format("has {} elements, more than the limit of {}", *n, limit));
    check_storage(f, ds.get(), norm, out.shape, *n, esize);

    out.data.resize(static_cast<std::size_t>(*n));
    // H5T_NATIVE_FLOAT as memory type: HDF5 converts float16/float64 (overflow becomes +-inf).
    if (*n > 0 && H5Dread(ds.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data.data()) < 0)
        f.fail(norm, fmt::format("cannot read data ({}), expected {} float values; the file may be truncated "
                                 "or corrupt", hdf5_detail(), *n));
    return out;
}

std::vector<std::int64_t> File::dataset_shape(const std::string& dataset) const {
    if (boxed_) return boxed_->dataset_shape(dataset);
    Lock lock(hdf5_mutex());
    const FileImpl& f = live(impl_);
    std::string norm;
    ObjectId ds = f.open_as(dataset, H5I_DATASET, norm);
    return shape_of(f, ds.get(), norm);
}

}  // namespace graft::h5
