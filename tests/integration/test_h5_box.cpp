// HDF5 in a box (graft/hdf5_containment.hpp): the sandboxed helper reads the same models as the
// in-process reader (checked against Keras' own outputs), and whatever the helper does - crash,
// hang, abort, exit, send a malformed or lying reply - becomes a FormatError naming the file,
// never a crash or hang of the host. The seccomp filter really kills a forbidden system call.
#include <catch2/catch.hpp>

#include <hdf5.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "frontend/keras/h5_file.hpp"
#include "graft/graft.hpp"
#include "support.hpp"

namespace graft_test_h5_box {

using namespace graft_test;

namespace {

const fs::path kIris = source_path("samples/models/iris");

/// Loads the Iris sample with `box` and checks its predictions against Keras' (expected.npy).
void check_iris(const graft::Hdf5Containment& box) {
    graft::LoadOptions o;
    o.hdf5 = box;
    auto model = graft::load((kIris / "model.h5").string(), o);
    const auto out = model.run(std::vector<graft::Tensor>{load_npy(kIris / "input.npy")});
    const Comparison c = compare(out.at(0), load_npy(kIris / "expected.npy"), 1e-5, 1e-5);
    CHECK(c.ok());
}

graft::Hdf5Containment fake(double timeout = 10) {
    graft::Hdf5Containment b;
    b.helper = GRAFT_FAKE_H5_READER;
    b.timeout_seconds = timeout;
    return b;
}

/// The FormatError message of opening `name` through the fake helper.
std::string fake_error(const std::string& name, double timeout = 10) {
    try {
        auto f = graft::h5::File::open(name, fake(timeout));
        (void)f.has_dataset("/x");
        (void)f.read_floats("/x");
    } catch (const graft::FormatError& e) {
        return e.what();
    }
    FAIL("no FormatError for " << name);
    return {};
}

}  // namespace

TEST_CASE("h5 box: the sandboxed reader loads a model as Keras predicts, and so does the in-process opt-out", "[h5box]") {
    graft::Hdf5Containment boxed;
    REQUIRE(boxed.enabled);  // the default
    check_iris(boxed);
    graft::Hdf5Containment in_process;
    in_process.enabled = false;
    in_process.helper = "/nonexistent/graft-h5-reader";  // never started
    check_iris(in_process);
}

TEST_CASE("h5 box: reads through the helper equal reads in process", "[h5box]") {
    const std::string path = (kIris / "model.h5").string();
    auto local = graft::h5::File::open(path);
    auto boxed = graft::h5::File::open(path, graft::Hdf5Containment{});
    CHECK(boxed.path() == path);
    CHECK(boxed.string_attribute("/", "model_config") == local.string_attribute("/", "model_config"));
    CHECK(boxed.string_attribute("/", "no_such") == std::nullopt);
    CHECK(boxed.string_list_attribute("/model_weights", "layer_names") ==
          local.string_list_attribute("/model_weights", "layer_names"));
    CHECK(boxed.children("/model_weights") == local.children("/model_weights"));
    CHECK(boxed.has_group("/model_weights"));
    CHECK_FALSE(boxed.has_dataset("/model_weights"));
    for (const auto& layer : local.children("/model_weights")) {
        const std::string g = "/model_weights/" + layer;
        CHECK(boxed.has_attribute(g, "weight_names") == local.has_attribute(g, "weight_names"));
        for (const auto& w : local.string_list_attribute(g, "weight_names").value_or(std::vector<std::string>{})) {
            const auto a = local.read_floats(g + "/" + w), b = boxed.read_floats(g + "/" + w);
            CHECK(a.shape == b.shape);
            CHECK(a.data == b.data);
            CHECK(boxed.dataset_shape(g + "/" + w) == a.shape);
        }
    }
    // The reader's own errors come through with their message and type.
    CHECK_THROWS_WITH(boxed.read_floats("/model_weights"), Catch::Contains("is a group, expected a dataset"));
    CHECK_THROWS_AS(graft::h5::File::open("/nonexistent.h5", graft::Hdf5Containment{}), graft::IOError);
    CHECK_THROWS_WITH(graft::h5::File::open(source_path("tests/fixtures/bad/not_hdf5.h5").string(), graft::Hdf5Containment{}),
                      Catch::Contains("not an HDF5 file"));
}

TEST_CASE("h5 box: a crash, abort, exit or hang of the helper is a FormatError naming the file", "[h5box]") {
    CHECK_THAT(fake_error("/tmp/segv.h5"),
               Catch::StartsWith("/tmp/segv.h5: /: the HDF5 reader crashed (SIGSEGV) while opening the file"));
    CHECK_THAT(fake_error("/tmp/abort.h5"), Catch::Contains("the HDF5 reader crashed (SIGABRT)"));
    CHECK_THAT(fake_error("/tmp/exit7.h5"), Catch::Contains("the HDF5 reader exited with status 7"));
    const auto t0 = std::chrono::steady_clock::now();
    CHECK_THAT(fake_error("/tmp/hang.h5", 0.5), Catch::Contains("the HDF5 reader timed out after 0.5 s while opening the file"));
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
}

TEST_CASE("h5 box: malformed or lying replies are refused before anything is allocated", "[h5box]") {
    CHECK_THAT(fake_error("/tmp/garbage.h5"), Catch::Contains("sent a malformed reply (a string of 4294967295 bytes"));
    std::string liar;
    auto f = graft::h5::File::open("/tmp/liar.h5", fake());
    try {
        (void)f.read_floats("/x");
    } catch (const graft::FormatError& e) {
        liar = e.what();
    }
    CHECK_THROWS_WITH(f.has_group("/"), liar);  // stopped: every later read repeats why
    CHECK_THAT(liar, Catch::Contains("/tmp/liar.h5: /x: the HDF5 reader sent a malformed reply"));
    CHECK_THAT(liar, Catch::Contains("1099511627776 values"));
}

TEST_CASE("h5 box: files that crash HDF5 in process are FormatErrors naming them, host unharmed", "[h5box]") {
    // tests/fixtures/bad/README.md: found by tests/fuzz/mutate.py; never read in process here.
    const std::string path = source_path("tests/fixtures/bad/hdf5_crash_attr_exists.h5").string();
    CHECK_THROWS_AS(graft::load(path), graft::FormatError);
    CHECK_THROWS_WITH(graft::load(path), Catch::StartsWith(path + ": "));
    const auto r = run_cli({"run", path, "--input", source_path("tests/fixtures/bad/input_wrong_shape.npy").string(), "--print"});
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.err, Catch::StartsWith("graft: error: " + path + ": "));
    // This one crashed the sandboxed reader too when it was found; since the loader checks every
    // declared weight before decoding (limits), HDF5 reports the broken header instead. Either
    // way: a FormatError naming the file and the group.
    const std::string permute = source_path("tests/fixtures/bad/hdf5_crash_permute.h5").string();
    CHECK_THROWS_AS(graft::load(permute), graft::FormatError);
    CHECK_THROWS_WITH(graft::load(permute), Catch::StartsWith(permute + ": /model_weights/permute_1: "));
}

TEST_CASE("h5 box: the helper is found via $GRAFT_H5_HELPER, and a missing one is named", "[h5box]") {
    ::setenv("GRAFT_H5_HELPER", GRAFT_FAKE_H5_READER, 1);
    std::string msg;
    try {
        graft::h5::File::open("/tmp/segv.h5", graft::Hdf5Containment{});
    } catch (const graft::FormatError& e) {
        msg = e.what();
    }
    ::unsetenv("GRAFT_H5_HELPER");
    CHECK_THAT(msg, Catch::Contains("crashed (SIGSEGV)"));
    graft::Hdf5Containment missing;
    missing.helper = "/nonexistent/graft-h5-reader";
    CHECK_THROWS_WITH(graft::h5::File::open((kIris / "model.h5").string(), missing),
                      Catch::Contains("/nonexistent/graft-h5-reader (Hdf5Containment::helper) is not an executable file"));
}

TEST_CASE("h5 box: the seccomp filter kills a forbidden system call (socket)", "[h5box]") {
    pid_t pid = -1;
    char* argv[] = {const_cast<char*>(GRAFT_H5_READER), const_cast<char*>("--check-sandbox"), nullptr};
    char* envp[] = {nullptr};
    REQUIRE(::posix_spawn(&pid, GRAFT_H5_READER, nullptr, nullptr, argv, envp) == 0);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGSYS);
}

TEST_CASE("h5 box: a dataset larger than the helper's memory limit is a FormatError", "[h5box]") {
    TempDir dir;
    const fs::path p = dir / "big.h5";
    {  // 2^26 zero floats (256 MiB), gzip-compressed chunks: a small file
        hid_t f = H5Fcreate(p.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        hsize_t dims[1] = {hsize_t{1} << 26}, chunk[1] = {hsize_t{1} << 22};
        hid_t space = H5Screate_simple(1, dims, nullptr), mem = H5Screate_simple(1, chunk, nullptr);
        hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        H5Pset_chunk(dcpl, 1, chunk);
        H5Pset_deflate(dcpl, 1);
        hid_t ds = H5Dcreate2(f, "x", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        const std::vector<float> zeros(chunk[0]);
        for (hsize_t off = 0; off < dims[0]; off += chunk[0]) {
            H5Sselect_hyperslab(space, H5S_SELECT_SET, &off, nullptr, chunk, nullptr);
            REQUIRE(H5Dwrite(ds, H5T_NATIVE_FLOAT, mem, space, H5P_DEFAULT, zeros.data()) >= 0);
        }
        H5Dclose(ds), H5Pclose(dcpl), H5Sclose(mem), H5Sclose(space), H5Fclose(f);
    }
    graft::Hdf5Containment box;
    box.max_memory = std::uint64_t{128} << 20;
    auto file = graft::h5::File::open(p.string(), box);
    CHECK(file.dataset_shape("/x") == std::vector<std::int64_t>{std::int64_t{1} << 26});
    CHECK_THROWS_WITH(file.read_floats("/x"),
                      Catch::Contains("/x: the HDF5 reader ran out of memory (its limit is 128 MiB) while reading a dataset"));
}

TEST_CASE("h5 box: many threads load through their own helpers at once", "[h5box]") {
    std::vector<std::thread> threads;
    std::vector<int> ok(6, 0);
    for (std::size_t i = 0; i < ok.size(); ++i)
        threads.emplace_back([&, i] {
            auto model = graft::load((kIris / "model.h5").string());
            const auto out = model.run(std::vector<graft::Tensor>{load_npy(kIris / "input.npy")});
            ok[i] = compare(out.at(0), load_npy(kIris / "expected.npy"), 1e-5, 1e-5).ok();
        });
    for (auto& t : threads) t.join();
    CHECK(ok == std::vector<int>(ok.size(), 1));
}

}  // namespace graft_test_h5_box
