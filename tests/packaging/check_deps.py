#!/usr/bin/env python3
"""The vcpkg port and the Conan recipe name the same dependencies as the CMake package.

    check_deps.py SOURCE_DIR

Reads, without running vcpkg or Conan (neither can run offline):
  - cmake/graftConfig.cmake.in: the find_dependency() packages (what consumers of the installed
    package find), which must be exactly the library's find_package(... REQUIRED) calls in the
    top-level CMakeLists.txt (so the config cannot drift from the build);
  - tools/CMakeLists.txt: find_package(... REQUIRED) for the graft tool (build-only);
  - ports/graft/vcpkg.json: "dependencies" (host tools such as vcpkg-cmake left aside);
  - conanfile.py: self.requires(...) in requirements() (parsed with ast, not executed), and the
    `::` package names of package_info()'s component requires.
Also: vcpkg.json's version is version.hpp's.
Each CMake package is mapped to its vcpkg port and Conan package by the table below; a CMake
package the table does not know is an error, so a new dependency cannot slip through.
Exits 1 listing every difference.
"""
import ast
import json
import re
import sys
from pathlib import Path

# CMake package -> (vcpkg port, Conan package); None: part of the system, no package.
PACKAGES = {
    "HDF5": ("hdf5", "hdf5"),
    "RapidJSON": ("rapidjson", "rapidjson"),
    "Boost": ("boost-dll", "boost"),  # Boost.DLL, header-only
    "fmt": ("fmt", "fmt"),
    "xtensor": ("xtensor", "xtensor"),
    "libzip": ("libzip", "libzip"),
    "ZLIB": ("zlib", "zlib"),
    "CLI11": ("cli11", "cli11"),
    "ONNX": ("onnx", "onnx"),
    "Protobuf": ("protobuf", "protobuf"),
    "Threads": None,
    # pkg-config finds libseccomp for the sandboxed HDF5 reader graft-h5-reader (tools/CMakeLists.txt;
    # Linux only, build-only, not part of the CMake package): a system library, like Threads.
    "PkgConfig": None,
}
# vcpkg helper ports the portfile itself uses (host dependencies), not graft's dependencies.
VCPKG_HELPERS = {"vcpkg-cmake", "vcpkg-cmake-config"}


def cmake_calls(path, command, required_only):
    """First arguments of every `command(` call in a CMake file (comments stripped)."""
    text = "\n".join(line.split("#", 1)[0] for line in path.read_text().splitlines())
    names = []
    for m in re.finditer(r"\b%s\s*\(([^)]*)\)" % command, text, re.IGNORECASE):
        args = m.group(1).split()
        if args and (not required_only or "REQUIRED" in args):
            names.append(args[0])
    return names


def vcpkg_dependencies(path):
    deps = json.loads(path.read_text()).get("dependencies", [])
    names = []
    for d in deps:
        if isinstance(d, str):
            names.append(d)
        elif not d.get("host"):
            names.append(d["name"])
        elif d["name"] not in VCPKG_HELPERS:
            names.append(d["name"])  # an unexpected host dependency is still compared
    return names


def conan_dependencies(path):
    """(requires of requirements() and the `requires` attribute, packages named in components)."""
    tree = ast.parse(path.read_text())
    requires, component_pkgs = [], set()
    for node in ast.walk(tree):
        # self.requires("name/version", ...) anywhere (requirements())
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "requires"
                and node.args and isinstance(node.args[0], ast.Constant)):
            requires.append(node.args[0].value.split("/")[0])
        # requires = "a/1", ("a/1", "b/2") as a class attribute
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "requires" for t in node.targets):
            values = node.value.elts if isinstance(node.value, (ast.Tuple, ast.List)) else [node.value]
            requires += [v.value.split("/")[0] for v in values if isinstance(v, ast.Constant)]
        # <component>.requires = ["core", "hdf5::hdf5", ...]
        if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "requires" for t in node.targets)
                and isinstance(node.value, (ast.List, ast.Tuple))):
            component_pkgs |= {v.value.split("::")[0] for v in node.value.elts
                               if isinstance(v, ast.Constant) and "::" in v.value}
    return requires, component_pkgs


def main(src):
    src = Path(src)
    errors = []

    config = cmake_calls(src / "cmake" / "graftConfig.cmake.in", "find_dependency", required_only=False)
    library = cmake_calls(src / "CMakeLists.txt", "find_package", required_only=True)
    tool = cmake_calls(src / "tools" / "CMakeLists.txt", "find_package", required_only=True)
    if not config or not library:
        errors.append(f"found no find_dependency ({config}) or no find_package ({library}): parser out of date?")
    if sorted(set(config)) != sorted(set(library)):
        errors.append(f"graftConfig.cmake.in finds {sorted(set(config))} but CMakeLists.txt builds with {sorted(set(library))}")

    cmake_pkgs = set(config) | set(tool)
    unknown = sorted(p for p in cmake_pkgs if p not in PACKAGES)
    if unknown:
        errors.append(f"no vcpkg/Conan name known for CMake package(s) {unknown}: add them to PACKAGES in {__file__}")
    want_vcpkg = {PACKAGES[p][0] for p in cmake_pkgs if PACKAGES.get(p)}
    want_conan = {PACKAGES[p][1] for p in cmake_pkgs if PACKAGES.get(p)}
    want_components = {PACKAGES[p][1] for p in set(config) if PACKAGES.get(p)}  # the tool's deps are not the library's

    vcpkg = vcpkg_dependencies(src / "ports" / "graft" / "vcpkg.json")
    conan, components = conan_dependencies(src / "conanfile.py")
    for name, got, want in (("ports/graft/vcpkg.json", vcpkg, want_vcpkg), ("conanfile.py requirements()", conan, want_conan),
                            ("conanfile.py package_info() components", components, want_components)):
        if len(got) != len(set(got)):
            errors.append(f"{name}: a dependency is listed twice: {sorted(got)}")
        missing, extra = sorted(want - set(got)), sorted(set(got) - want)
        if missing or extra:
            errors.append(f"{name}: missing {missing}, not in the CMake package {extra}")

    # The version has one home, include/graft/version.hpp; vcpkg.json must repeat it.
    m = re.search(r'#define GRAFT_VERSION_STRING "([^"]+)"', (src / "include" / "graft" / "version.hpp").read_text())
    manifest = json.loads((src / "ports" / "graft" / "vcpkg.json").read_text())
    port_version = manifest.get("version-semver") or manifest.get("version")
    if not m or port_version != m.group(1):
        errors.append(f"ports/graft/vcpkg.json has version {port_version}, version.hpp {m and m.group(1)}")

    print(f"CMake package: {sorted(config)} (+ tool: {sorted(tool)})")
    print(f"vcpkg.json:    {sorted(vcpkg)}")
    print(f"conanfile.py:  {sorted(conan)} (components: {sorted(components)})")
    for e in errors:
        print("MISMATCH:", e)
    print("recipe dependencies: " + ("differ" if errors else "the same"))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[2]))
