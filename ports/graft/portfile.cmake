# vcpkg overlay port that builds graft from this source tree:
#
#   vcpkg install graft --overlay-ports=/path/to/graft/ports
#
# The dependencies (vcpkg.json) are the ones graftConfig.cmake finds (cmake/graftConfig.cmake.in)
# plus CLI11 for the graft tool; tests/packaging/check_deps.py keeps the lists equal.
set(SOURCE_PATH "${CMAKE_CURRENT_LIST_DIR}/../..")

# BUILD_SHARED_LIBS follows the triplet's VCPKG_LIBRARY_LINKAGE (vcpkg_cmake_configure sets it).
vcpkg_cmake_configure(
    SOURCE_PATH "${SOURCE_PATH}"
    OPTIONS
        -DGRAFT_BUILD_TESTS=OFF
        -DGRAFT_WARNINGS_AS_ERRORS=OFF
        -DGRAFT_INSTALL_CMAKEDIR=share/graft
)
vcpkg_cmake_install()
vcpkg_cmake_config_fixup(PACKAGE_NAME graft CONFIG_PATH share/graft)
vcpkg_copy_tools(TOOL_NAMES graft AUTO_CLEAN)

file(REMOVE_RECURSE "${CURRENT_PACKAGES_DIR}/debug/include" "${CURRENT_PACKAGES_DIR}/debug/share")

file(INSTALL "${CMAKE_CURRENT_LIST_DIR}/usage" DESTINATION "${CURRENT_PACKAGES_DIR}/share/${PORT}")
if(EXISTS "${SOURCE_PATH}/LICENSE")
    vcpkg_install_copyright(FILE_LIST "${SOURCE_PATH}/LICENSE")
else()
    # graft has no license file yet; say so rather than invent one.
    file(WRITE "${CURRENT_PACKAGES_DIR}/share/${PORT}/copyright" "graft: no license has been chosen yet (no LICENSE file in the source tree).\n")
endif()
