// Tests for graft::h5::File (lib/frontend/keras/h5_file.cpp, h5_attributes.cpp, h5_datasets.cpp).
// The HDF5 files are written here with the HDF5 C API, the way h5py/Keras write them.
#include <catch2/catch.hpp>

#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "frontend/keras/h5_file.hpp"
#include "graft/error.hpp"

namespace graft_test_h5_file {

namespace fs = std::filesystem;
using graft::h5::File;
using Catch::Matchers::Contains;

namespace {

// A fresh directory under the system temp dir, removed at the end of the test.
struct TempDir {
    fs::path dir;
    TempDir() {
        std::string tmpl = (fs::temp_directory_path() / "graft_h5_test_XXXXXX").string();
        REQUIRE(mkdtemp(tmpl.data()) != nullptr);
        dir = tmpl;
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
    std::string file(const std::string& name) const { return (dir / name).string(); }
};

/// `obj` has no attribute `name` (or `obj` does not exist): every attribute query says so
/// without failing.
void check_no_attribute(const File& f, const std::string& obj, const std::string& name) {
    INFO(obj << " has no attribute " << name);
    CHECK_FALSE(f.has_attribute(obj, name));
    CHECK_FALSE(f.string_attribute(obj, name));
    CHECK_FALSE(f.string_list_attribute(obj, name));
}

// Writes test files with the HDF5 C API. Every id is closed before the next call returns.
class Writer {
public:
    enum Mode { create, append };
    explicit Writer(const std::string& path, Mode mode = create) {
        file_ = mode == create ? H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)
                               : H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
        REQUIRE(file_ >= 0);
    }
    ~Writer() { H5Fclose(file_); }

    // Creates a group and any missing parents.
    void group(const std::string& path) {
        hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
        H5Pset_create_intermediate_group(lcpl, 1);
        hid_t g = H5Gcreate2(file_, path.c_str(), lcpl, H5P_DEFAULT, H5P_DEFAULT);
        REQUIRE(g >= 0);
        H5Gclose(g);
        H5Pclose(lcpl);
    }

    // A dataset of `type` (parents created), with `data` in `mem_type`.
    void dataset(const std::string& path, std::vector<hsize_t> dims, hid_t type, hid_t mem_type, const void* data,
                 bool scalar = false) {
        hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
        H5Pset_create_intermediate_group(lcpl, 1);
        hid_t space = scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(int(dims.size()), dims.data(), nullptr);
        hid_t ds = H5Dcreate2(file_, path.c_str(), type, space, lcpl, H5P_DEFAULT, H5P_DEFAULT);
        REQUIRE(ds >= 0);
        REQUIRE(H5Dwrite(ds, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0);
        H5Dclose(ds);
        H5Sclose(space);
        H5Pclose(lcpl);
    }

    // An attribute of any type and shape on object `obj` (nullopt dims = scalar).
    void attr(const std::string& obj, const std::string& name, hid_t type, const std::vector<hsize_t>* dims,
              hid_t mem_type, const void* data) {
        hid_t space = dims ? H5Screate_simple(int(dims->size()), dims->data(), nullptr) : H5Screate(H5S_SCALAR);
        hid_t a = H5Acreate_by_name(file_, obj.c_str(), name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT,
                                    H5P_DEFAULT);
        REQUIRE(a >= 0);
        REQUIRE(H5Awrite(a, mem_type, data) >= 0);
        H5Aclose(a);
        H5Sclose(space);
    }

    // What numpy's S<width> array becomes: fixed-length, NUL-padded, ASCII.
    void fixed_strings(const std::string& obj, const std::string& name, const std::vector<std::string>& v,
                       std::size_t width, H5T_str_t pad = H5T_STR_NULLPAD, bool scalar = false) {
        std::string buf(v.size() * width, pad == H5T_STR_SPACEPAD ? ' ' : '\0');
        for (std::size_t i = 0; i < v.size(); ++i) buf.replace(i * width, v[i].size(), v[i]);
        strings(obj, name, v.size(), scalar, buf.data(), [&](hid_t t) {
            H5Tset_size(t, width);
            H5Tset_strpad(t, pad);
        });
    }

    // What h5py writes for str: variable-length strings (UTF-8 by default).
    void vlen_strings(const std::string& obj, const std::string& name, const std::vector<std::string>& v,
                      bool scalar, H5T_cset_t cset = H5T_CSET_UTF8) {
        std::vector<const char*> ptrs;
        for (const auto& s : v) ptrs.push_back(s.c_str());
        strings(obj, name, v.size(), scalar, ptrs.data(), [&](hid_t t) {
            H5Tset_size(t, H5T_VARIABLE);
            H5Tset_cset(t, cset);
        });
    }

    hid_t id() const { return file_; }

private:
    // n strings at `data` (scalar: one) in a copy of H5T_C_S1 that `set_type` adjusts.
    template <class SetType>
    void strings(const std::string& obj, const std::string& name, std::size_t n, bool scalar, const void* data,
                 SetType set_type) {
        hid_t t = H5Tcopy(H5T_C_S1);
        set_type(t);
        std::vector<hsize_t> dims{n};
        attr(obj, name, t, scalar ? nullptr : &dims, t, data);
        H5Tclose(t);
    }

    hid_t file_ = -1;
};

// A small Keras-like model file used by several tests.
std::string write_model(const TempDir& tmp, const std::string& name = "model.h5") {
    const std::string path = tmp.file(name);
    Writer w(path);
    w.group("/model_weights/dense_1/dense_1");
    w.group("/model_weights/lstm/lstm/lstm_cell");
    w.fixed_strings("/", "keras_version", {"2.4.0"}, 5, H5T_STR_NULLPAD, true);
    w.vlen_strings("/", "model_config", {"{\"class_name\": \"Sequential\", \"name\": \"h\xc3\xa9llo \xe2\x9c\x93\"}"},
                   true);
    w.fixed_strings("/model_weights", "layer_names", {"dense_1", "lstm", "x"}, 7);
    w.fixed_strings("/model_weights/dense_1", "weight_names", {"dense_1/kernel:0", "dense_1/bias:0"}, 16);
    const double kernel[6] = {1.5, -2.0, 3.25, 0.0, 1e-3, 1e300};
    w.dataset("/model_weights/dense_1/dense_1/kernel:0", {2, 3}, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, kernel);
    const double bias[3] = {0.5, 0.25, -1};
    w.dataset("/model_weights/dense_1/dense_1/bias:0", {3}, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, bias);
    const float lstm[4] = {1, 2, 3, 4};
    w.dataset("/model_weights/lstm/lstm/lstm_cell/kernel:0", {1, 4}, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, lstm);
    const int ints[3] = {1, 2, 3};
    w.dataset("/model_weights/ints", {3}, H5T_STD_I32LE, H5T_NATIVE_INT, ints);
    const double empty = 0;
    std::vector<hsize_t> zero{0};
    w.attr("/model_weights/lstm", "weight_names", H5T_IEEE_F64LE, &zero, H5T_NATIVE_DOUBLE, &empty);
    return path;
}

}  // namespace

TEST_CASE("h5::File reads fixed-length NUL-padded string lists", "[h5]") {
    TempDir tmp;
    File f = File::open(write_model(tmp));
    auto names = f.string_list_attribute("/model_weights", "layer_names");
    REQUIRE(names);
    CHECK(*names == std::vector<std::string>{"dense_1", "lstm", "x"});
    CHECK(*f.string_list_attribute("/model_weights/dense_1", "weight_names") ==
          std::vector<std::string>{"dense_1/kernel:0", "dense_1/bias:0"});
    CHECK(*f.string_attribute("/", "keras_version") == "2.4.0");
    check_no_attribute(f, "/model_weights", "absent");
    check_no_attribute(f, "/no/such/object", "layer_names");
}

TEST_CASE("h5::File reads variable-length UTF-8 strings", "[h5]") {
    TempDir tmp;
    const std::string path = tmp.file("vlen.h5");
    {
        Writer w(path);
        w.vlen_strings("/", "utf8", {"h\xc3\xa9llo \xe2\x9c\x93"}, true);
        w.vlen_strings("/", "ascii", {"plain"}, true, H5T_CSET_ASCII);
        w.vlen_strings("/", "one", {"only"}, false);  // a 1-element simple dataspace
        w.vlen_strings("/", "list", {"a", "", "b\xc3\xa9"}, false);
        w.vlen_strings("/", "two", {"a", "b"}, false);
        w.fixed_strings("/", "nullterm", {"abc"}, 8, H5T_STR_NULLTERM, true);
        w.fixed_strings("/", "spaces", {"abc", "de"}, 6, H5T_STR_SPACEPAD);
        // A fixed-length string stored as an H5T_ARRAY of one element.
        hid_t s = H5Tcopy(H5T_C_S1);
        H5Tset_size(s, 4);
        hsize_t one = 1;
        hid_t arr = H5Tarray_create2(s, 1, &one);
        w.attr("/", "array1", arr, nullptr, arr, "xyz\0");
        H5Tclose(arr);
        H5Tclose(s);
    }
    File f = File::open(path);
    CHECK(*f.string_attribute("/", "utf8") == "h\xc3\xa9llo \xe2\x9c\x93");
    CHECK(*f.string_attribute("/", "ascii") == "plain");
    CHECK(*f.string_attribute("/", "one") == "only");
    CHECK(*f.string_attribute("/", "nullterm") == "abc");
    CHECK(*f.string_attribute("/", "array1") == "xyz");
    CHECK(*f.string_list_attribute("/", "list") == std::vector<std::string>{"a", "", "b\xc3\xa9"});
    CHECK(*f.string_list_attribute("/", "spaces") == std::vector<std::string>{"abc", "de"});
    CHECK(*f.string_list_attribute("/", "utf8") == std::vector<std::string>{"h\xc3\xa9llo \xe2\x9c\x93"});
    CHECK_THROWS_WITH(f.string_attribute("/", "two"), Contains("expected a single string") && Contains("vlen.h5"));
}

TEST_CASE("h5::File string lists: empty, split and non-string", "[h5]") {
    TempDir tmp;
    const std::string path = tmp.file("lists.h5");
    {
        Writer w(path);
        w.group("/g");
        const double empty = 0, nums[2] = {1, 2};
        std::vector<hsize_t> zero{0}, two{2};
        w.attr("/g", "empty", H5T_IEEE_F64LE, &zero, H5T_NATIVE_DOUBLE, &empty);
        w.attr("/g", "nums", H5T_IEEE_F64LE, &two, H5T_NATIVE_DOUBLE, nums);
        w.attr("/g", "num", H5T_IEEE_F64LE, nullptr, H5T_NATIVE_DOUBLE, nums);
        w.fixed_strings("/g", "split0", {"a", "bb"}, 2);
        w.vlen_strings("/g", "split1", {"ccc"}, false);
        w.fixed_strings("/g", "split2", {"d"}, 3);
        w.fixed_strings("/g", "gap0", {"a"}, 1);
        w.fixed_strings("/g", "gap2", {"c"}, 1);  // gap1 missing: reading stops at gap0
    }
    File f = File::open(path);
    CHECK(f.string_list_attribute("/g", "empty")->empty());
    CHECK(*f.string_list_attribute("/g", "split") == std::vector<std::string>{"a", "bb", "ccc", "d"});
    CHECK(*f.string_list_attribute("/g", "gap") == std::vector<std::string>{"a"});
    check_no_attribute(f, "/g", "nothing");
    CHECK(f.has_attribute("/g", "split0"));
    CHECK_FALSE(f.has_attribute("/g", "split"));
    check_no_attribute(f, "/missing/deeper", "split0");
    CHECK_THROWS_AS(f.string_list_attribute("/g", "nums"), graft::FormatError);
    CHECK_THROWS_WITH(f.string_list_attribute("/g", "nums"),
                      Contains("lists.h5: /g: attribute \"nums\" is a float array of 2 elements") &&
                          Contains("expected a list of strings"));
    CHECK_THROWS_WITH(f.string_attribute("/g", "num"), Contains("a float value, expected a string"));
}

TEST_CASE("h5::File reads float datasets as float32", "[h5]") {
    TempDir tmp;
    const std::string path = write_model(tmp);
    {  // extra datasets: a scalar and a float16 array (h5py's half type)
        Writer w(path, Writer::append);
        const double v = 7.5;
        w.dataset("/scalar", {}, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &v, true);
        hid_t half = H5Tcopy(H5T_IEEE_F32LE);
        H5Tset_fields(half, 15, 10, 5, 0, 10);
        H5Tset_size(half, 2);
        H5Tset_ebias(half, 15);
        const std::uint16_t bits[3] = {0x3C00, 0xC000, 0x3800};  // 1, -2, 0.5
        w.dataset("/half", {3}, half, half, bits);
        H5Tclose(half);
    }
    File f = File::open(path);
    auto k = f.read_floats("/model_weights/dense_1/dense_1/kernel:0");
    CHECK(k.shape == std::vector<std::int64_t>{2, 3});
    REQUIRE(k.data.size() == 6);
    CHECK(k.data[0] == 1.5f);
    CHECK(k.data[2] == 3.25f);
    CHECK(k.data[4] == Approx(1e-3));
    CHECK(std::isinf(k.data[5]));  // 1e300 overflows float32
    CHECK(f.dataset_shape("/model_weights/dense_1/dense_1/bias:0") == std::vector<std::int64_t>{3});
    auto lstm = f.read_floats("model_weights//lstm/./lstm/lstm_cell/kernel:0");
    CHECK(lstm.data == std::vector<float>{1, 2, 3, 4});
    auto s = f.read_floats("/scalar");
    CHECK(s.shape.empty());
    CHECK(s.data == std::vector<float>{7.5f});
    CHECK(f.read_floats("/half").data == std::vector<float>{1.0f, -2.0f, 0.5f});

    CHECK_THROWS_WITH(f.read_floats("/model_weights/dense_1/dense_1/kernel:0", 5),
                      Contains("model.h5: /model_weights/dense_1/dense_1/kernel:0: has 6 elements, more than the "
                               "limit of 5"));
    CHECK_THROWS_WITH(f.read_floats("/model_weights/ints"),
                      Contains("model.h5: /model_weights/ints: holds an integer type, expected float"));
    CHECK_THROWS_AS(f.read_floats("/model_weights/ints"), graft::FormatError);
    CHECK_THROWS_WITH(f.read_floats("/model_weights/nope:0"),
                      Contains("model.h5: /model_weights/nope:0: missing, expected a dataset"));
    CHECK_THROWS_WITH(f.read_floats("/model_weights"), Contains("is a group, expected a dataset"));
    CHECK_THROWS_WITH(f.children("/model_weights/ints"), Contains("is a dataset, expected a group"));
}

TEST_CASE("h5::File checks dataset storage before reading", "[h5]") {
    TempDir tmp;
    const std::string path = tmp.file("storage.h5");
    {
        Writer w(path);
        hsize_t dims[2] = {4, 6}, chunk[2] = {2, 3};
        std::vector<double> v(24);
        for (int i = 0; i < 24; ++i) v[i] = i * 0.5;
        hid_t space = H5Screate_simple(2, dims, nullptr);
        // gzip + shuffle chunks, as h5py writes with compression="gzip"
        hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        H5Pset_chunk(dcpl, 2, chunk);
        H5Pset_shuffle(dcpl);
        H5Pset_deflate(dcpl, 4);
        hid_t ds = H5Dcreate2(w.id(), "/gzip", H5T_IEEE_F64LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
        H5Dclose(ds);
        // the same, but only the first chunk written
        ds = H5Dcreate2(w.id(), "/sparse", H5T_IEEE_F64LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        hsize_t start[2] = {0, 0};
        hid_t sel = H5Scopy(space);
        H5Sselect_hyperslab(sel, H5S_SELECT_SET, start, nullptr, chunk, nullptr);
        hid_t mem = H5Screate_simple(2, chunk, nullptr);
        H5Dwrite(ds, H5T_NATIVE_DOUBLE, mem, sel, H5P_DEFAULT, v.data());
        H5Dclose(ds);
        H5Sclose(mem);
        H5Sclose(sel);
        H5Pclose(dcpl);
        // contiguous, never written
        ds = H5Dcreate2(w.id(), "/unwritten", H5T_IEEE_F32LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        H5Dclose(ds);
        // data in an external raw file
        dcpl = H5Pcreate(H5P_DATASET_CREATE);
        H5Pset_external(dcpl, tmp.file("raw.bin").c_str(), 0, 24 * 8);
        ds = H5Dcreate2(w.id(), "/external", H5T_IEEE_F64LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
        H5Dclose(ds);
        H5Pclose(dcpl);
        // compact layout
        dcpl = H5Pcreate(H5P_DATASET_CREATE);
        H5Pset_layout(dcpl, H5D_COMPACT);
        ds = H5Dcreate2(w.id(), "/compact", H5T_IEEE_F64LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
        H5Dclose(ds);
        H5Pclose(dcpl);
        H5Sclose(space);
    }
    File f = File::open(path);
    if (H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0) {
        auto a = f.read_floats("/gzip");
        CHECK(a.shape == std::vector<std::int64_t>{4, 6});
        CHECK(a.data[23] == 11.5f);
    }
    CHECK(f.read_floats("/compact").data[7] == 3.5f);
    CHECK_THROWS_WITH(f.read_floats("/sparse"),
                      Contains("storage.h5: /sparse: has 1 of its 4 chunks stored, expected all of them"));
    CHECK_THROWS_WITH(f.read_floats("/unwritten"), Contains("storage.h5: /unwritten: has no stored data"));
    CHECK_THROWS_WITH(f.read_floats("/external"), Contains("storage.h5: /external: stores its data in 1 external"));
    CHECK(f.dataset_shape("/external") == std::vector<std::int64_t>{4, 6});
}

TEST_CASE("h5::File reads dense groups, string arrays and rejects corrupt string heaps", "[h5]") {
    TempDir tmp;
    const std::string path = tmp.file("latest.h5");
    {
        hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
        H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
        hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
        REQUIRE(file >= 0);
        for (int i = 19; i >= 0; --i) {  // 20 links: dense (fractal heap) link storage
            hid_t g = H5Gcreate2(file, ("/g" + std::to_string(i)).c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
            H5Gclose(g);
        }
        H5Fclose(file);
        H5Pclose(fapl);
    }
    {
        Writer w(path, Writer::append);
        // an H5T_ARRAY of two variable-length strings
        hid_t s = H5Tcopy(H5T_C_S1);
        H5Tset_size(s, H5T_VARIABLE);
        hsize_t two = 2;
        hid_t arr = H5Tarray_create2(s, 1, &two);
        const char* v[2] = {"first", "second"};
        w.attr("/", "arr", arr, nullptr, arr, v);
        H5Tclose(arr);
        H5Tclose(s);
        w.vlen_strings("/", "cfg", {"{\"config\": 1}"}, true, H5T_CSET_ASCII);
    }
    {
        File f = File::open(path);
        auto kids = f.children("/");
        REQUIRE(kids.size() == 20);
        CHECK(std::is_sorted(kids.begin(), kids.end()));
        CHECK(kids[0] == "g0");
        CHECK(kids[1] == "g1");
        CHECK(kids[2] == "g10");
        CHECK(*f.string_list_attribute("/", "arr") == std::vector<std::string>{"first", "second"});
        CHECK(*f.string_attribute("/", "cfg") == "{\"config\": 1}");
        File g = std::move(f);
        CHECK_THROWS_AS(f.has_group("/"), graft::Error);  // NOLINT(bugprone-use-after-move)
        CHECK(g.has_group("/g7"));
    }

    // Corrupt the global heap holding the strings: HDF5 1.10 itself would crash on these.
    const auto size = fs::file_size(path);
    std::string bytes(size, '\0');
    std::ifstream(path, std::ios::binary).read(bytes.data(), std::streamsize(size));
    const std::size_t gcol = bytes.find("GCOL");
    REQUIRE(gcol != std::string::npos);
    struct Patch {
        std::size_t at;
        std::string with;
        const char* expect;
        bool all;  // breaks every string of the collection, not just the first
    };
    const Patch patches[] = {
        {gcol + 16, std::string("\x07\x00", 2), "which does not exist", false},  // first object's index
        {gcol + 24, std::string("\xff\xff\xff\x00", 4), "more than its collection holds", true},  // its size
        {gcol + 8, std::string("\xff\xff\xff\x7f", 4), "global heap collection of", true},  // collection size
        {gcol, "XXXX", "holds no global heap collection", true},
    };
    for (const Patch& p : patches) {
        std::string bad = bytes;
        bad.replace(p.at, p.with.size(), p.with);
        const std::string corrupt = tmp.file("heap.h5");
        std::ofstream(corrupt, std::ios::binary | std::ios::trunc).write(bad.data(), std::streamsize(size));
        File f = File::open(corrupt);
        INFO(p.expect);
        CHECK_THROWS_WITH(f.string_list_attribute("/", "arr"),
                          Contains("heap.h5: /: attribute \"arr\"") && Contains(p.expect));
        if (p.all) CHECK_THROWS_AS(f.string_attribute("/", "cfg"), graft::FormatError);
    }
}

TEST_CASE("h5::File path queries never fail on missing intermediate links", "[h5]") {
    TempDir tmp;
    const std::string path = write_model(tmp);
    {  // a soft and an external link, which are not followed
        hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
        REQUIRE(H5Lcreate_soft("/model_weights/ints", file, "/soft", H5P_DEFAULT, H5P_DEFAULT) >= 0);
        REQUIRE(H5Lcreate_external("/etc/passwd", "/x", file, "/ext", H5P_DEFAULT, H5P_DEFAULT) >= 0);
        H5Fclose(file);
    }
    File f = File::open(path);
    const struct {
        std::string path;
        bool group, dataset;
    } queries[] = {
        {"/", true, false},
        {"", true, false},
        {"/model_weights", true, false},
        {"/model_weights/lstm/lstm/lstm_cell", true, false},
        {"/a/b/c", false, false},
        {"/model_weights/missing/deeper/still", false, false},
        {"/model_weights/ints/below", false, false},  // intermediate is a dataset
        {"/model_weights/ints", false, true},
        {"/model_weights/lstm/lstm/lstm_cell/kernel:0", false, true},
        {std::string("/model_weights/ints\0x", 22), false, false},
        {"/soft", false, false},
        {"/ext", false, false},
    };
    for (const auto& q : queries) {
        INFO(q.path);
        CHECK(f.has_group(q.path) == q.group);
        CHECK(f.has_dataset(q.path) == q.dataset);
    }
    CHECK(f.children("/") == std::vector<std::string>{"model_weights"});  // links are skipped
    CHECK(f.children("/model_weights") == std::vector<std::string>{"dense_1", "ints", "lstm"});
    CHECK(f.children("/model_weights/dense_1/dense_1") == std::vector<std::string>{"bias:0", "kernel:0"});
    CHECK_THROWS_WITH(f.children("/nope/x"), Contains("model.h5: /nope/x: missing, expected a group"));
    CHECK(f.has_attribute("/model_weights", "layer_names"));
    check_no_attribute(f, "/model_weights", "nope");
    check_no_attribute(f, "/nope/x", "layer_names");
}

TEST_CASE("h5::File::open reports missing, non-HDF5 and truncated files", "[h5]") {
    TempDir tmp;
    const std::string missing = tmp.file("missing.h5");
    CHECK_THROWS_AS(File::open(missing), graft::IOError);
    CHECK_THROWS_WITH(File::open(missing), Contains("missing.h5"));
    CHECK_THROWS_AS(File::open(tmp.dir.string()), graft::IOError);

    const std::string text = tmp.file("model.txt");
    std::ofstream(text) << "this is not an HDF5 file\n";
    CHECK_THROWS_AS(File::open(text), graft::FormatError);
    CHECK_THROWS_WITH(File::open(text), Contains("model.txt: not an HDF5 file"));
    const std::string empty = tmp.file("empty.h5");
    std::ofstream{empty};
    CHECK_THROWS_WITH(File::open(empty), Contains("empty.h5: not an HDF5 file"));

    if (geteuid() != 0) {  // root reads anything
        const std::string locked = write_model(tmp, "locked.h5");
        fs::permissions(locked, fs::perms::none);
        CHECK_THROWS_AS(File::open(locked), graft::IOError);
    }

    // Truncated copies: every cut must give FormatError (at open or at read), never a crash.
    const std::string good = write_model(tmp);
    const auto size = fs::file_size(good);
    std::string bytes(size, '\0');
    std::ifstream(good, std::ios::binary).read(bytes.data(), std::streamsize(size));
    for (std::size_t cut : {std::size_t{9}, std::size_t{100}, size / 4, size / 2, size - 100, size - 1}) {
        const std::string trunc = tmp.file("truncated.h5");
        std::ofstream(trunc, std::ios::binary | std::ios::trunc).write(bytes.data(), std::streamsize(cut));
        INFO("cut at " << cut << " of " << size);
        try {
            File f = File::open(trunc);
            f.read_floats("/model_weights/dense_1/dense_1/kernel:0");
            FAIL("truncated file was read");
        } catch (const graft::FormatError& e) {
            CHECK_THAT(e.what(), Contains("truncated.h5"));
        }
    }
}

TEST_CASE("h5::File leaks no HDF5 identifiers, even on errors", "[h5]") {
    TempDir tmp;
    const std::string path = write_model(tmp);
    const std::string text = tmp.file("text.h5");
    std::ofstream(text) << "not hdf5";
    auto counts = [] {
        std::vector<hsize_t> n;
        for (H5I_type_t t : {H5I_FILE, H5I_GROUP, H5I_DATATYPE, H5I_DATASPACE, H5I_DATASET, H5I_ATTR,
                             H5I_GENPROP_LST}) {
            hsize_t k = 0;
            H5Inmembers(t, &k);
            n.push_back(k);
        }
        return n;
    };
    {  // first use registers HDF5's own ids (and graft's one-time setup)
        File f = File::open(path);
        f.string_attribute("/", "model_config");
    }
    const auto before = counts();
    for (int i = 0; i < 3; ++i) {
        File f = File::open(path);
        f.string_attribute("/", "model_config");
        f.string_list_attribute("/model_weights", "layer_names");
        f.string_list_attribute("/model_weights/lstm", "weight_names");
        f.children("/model_weights");
        f.has_group("/x/y");
        f.has_attribute("/model_weights", "layer_names");
        f.read_floats("/model_weights/dense_1/dense_1/kernel:0");
        f.dataset_shape("/model_weights/ints");
        CHECK_THROWS(f.read_floats("/model_weights/ints"));
        CHECK_THROWS(f.read_floats("/model_weights/dense_1/dense_1/kernel:0", 1));
        CHECK_THROWS(f.string_attribute("/model_weights", "layer_names"));
        CHECK_THROWS(f.children("/nope"));
        CHECK_THROWS(File::open(text));
        CHECK_THROWS(File::open(tmp.file("missing.h5")));
    }
    CHECK(counts() == before);
}

TEST_CASE("h5::File can be used from several threads", "[h5]") {
    TempDir tmp;
    const std::string path = write_model(tmp);
    std::vector<std::thread> threads;
    std::vector<int> ok(4, 0);
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 25; ++i) try {
                File f = File::open(path);
                File g = std::move(f);
                const bool good = g.read_floats("/model_weights/dense_1/dense_1/bias:0").data.size() == 3 &&
                                  g.string_list_attribute("/model_weights", "layer_names")->size() == 3 &&
                                  g.string_attribute("/", "model_config")->find("Sequential") != std::string::npos;
                ok[t] += good ? 1 : 0;
            } catch (...) {  // counted as a failure below
            }
        });
    }
    for (auto& th : threads) th.join();
    CHECK(ok == std::vector<int>(4, 25));
}

}  // namespace graft_test_h5_file
