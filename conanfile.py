# Conan 2 recipe for graft, built from this source tree:
#
#   conan create . --build=missing                       # static library (default)
#   conan create . --build=missing -o "graft/*:shared=True"
#
# requirements() names the packages graftConfig.cmake finds (cmake/graftConfig.cmake.in), plus
# CLI11 for the graft tool; tests/packaging/check_deps.py keeps the lists equal.
import os

from conan import ConanFile
from conan.tools.build import check_min_cppstd
from conan.tools.cmake import CMake, CMakeDeps, CMakeToolchain, cmake_layout
from conan.tools.files import copy, load

required_conan_version = ">=2.0"


class GraftConan(ConanFile):
    name = "graft"
    description = "Keras models to an IR graph, run on a native CPU backend"
    topics = ("keras", "inference", "neural-networks", "hdf5")
    package_type = "library"
    settings = "os", "arch", "compiler", "build_type"
    options = {"shared": [True, False], "fPIC": [True, False]}
    default_options = {"shared": False, "fPIC": True, "boost/*:header_only": True}
    exports_sources = ("CMakeLists.txt", "cmake/*", "include/*", "lib/*", "tools/*", "plugins/*",
                       "Doxyfile.in", "README.md", "CHANGELOG.md", "docs/*")

    def set_version(self):
        # One home for the version: include/graft/version.hpp (CMakeLists.txt reads it too).
        text = load(self, os.path.join(self.recipe_folder, "include", "graft", "version.hpp"))
        self.version = text.split('#define GRAFT_VERSION_STRING "')[1].split('"')[0]

    def config_options(self):
        if self.settings.os == "Windows":
            del self.options.fPIC

    def configure(self):
        if self.options.shared:
            self.options.rm_safe("fPIC")

    def layout(self):
        cmake_layout(self)

    def requirements(self):
        # graft::core's headers include RapidJSON's.
        self.requires("rapidjson/cci.20230929", transitive_headers=True)
        self.requires("hdf5/1.14.3")
        self.requires("boost/1.84.0")  # Boost.DLL, header-only
        self.requires("fmt/10.2.1")
        self.requires("xtensor/0.24.7")
        self.requires("libzip/1.10.1")
        self.requires("zlib/1.3.1")
        self.requires("onnx/1.15.0")  # ONNX models
        self.requires("protobuf/3.21.12")
        # Only the graft tool uses CLI11: not visible to graft's consumers.
        self.requires("cli11/2.4.1", visible=False)

    def validate(self):
        check_min_cppstd(self, 17)

    def generate(self):
        tc = CMakeToolchain(self)
        tc.cache_variables["GRAFT_BUILD_TESTS"] = False
        tc.cache_variables["GRAFT_WARNINGS_AS_ERRORS"] = False
        tc.generate()
        CMakeDeps(self).generate()

    def build(self):
        cmake = CMake(self)
        cmake.configure()
        cmake.build()

    def package(self):
        CMake(self).install()

    def package_info(self):
        # The same file and target names as graft's own lib/cmake/graft/graftConfig.cmake.
        self.cpp_info.set_property("cmake_file_name", "graft")

        core = self.cpp_info.components["core"]
        core.set_property("cmake_target_name", "graft::core")
        core.requires = ["rapidjson::rapidjson"]
        core.bindirs = []
        core.libdirs = []

        lib = self.cpp_info.components["graft"]
        lib.set_property("cmake_target_name", "graft::graft")
        lib.libs = ["graft"]
        lib.requires = ["core", "hdf5::hdf5", "boost::boost", "fmt::fmt", "xtensor::xtensor",
                        "libzip::libzip", "zlib::zlib", "onnx::onnx", "protobuf::protobuf"]
        if not self.options.shared:
            lib.defines = ["GRAFT_STATIC_DEFINE"]  # graft/export.hpp: GRAFT_API is empty
        if self.settings.os in ("Linux", "FreeBSD"):
            lib.system_libs = ["dl", "pthread"]
