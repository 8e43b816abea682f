# Installation and the CMake package (find_package(graft)): headers, libgraft, the graft tool,
# lib/cmake/graft/graftConfig.cmake + graftConfigVersion.cmake + graftTargets.cmake with the
# targets graft::core and graft::graft. The sample plugins install themselves (plugins/).
#
#   cmake --install build/release --prefix /opt/graft
#
# Included from the top-level CMakeLists.txt once the targets graft_core, graft and graft_cli exist.
include(CMakePackageConfigHelpers)

set(GRAFT_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/graft" CACHE STRING
  "Where graftConfig.cmake is installed (relative to the prefix)")
set(GRAFT_INSTALL_PLUGINDIR "${CMAKE_INSTALL_LIBDIR}/graft/plugins")  # plugins/CMakeLists.txt installs there
set(GRAFT_INSTALL_BINDIR "${CMAKE_INSTALL_BINDIR}")

set_target_properties(graft_core PROPERTIES EXPORT_NAME core)
set_target_properties(graft PROPERTIES EXPORT_NAME graft)

install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/graft"
  DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
  FILES_MATCHING PATTERN "*.hpp")

# Two export sets, so that a plugin (find_package(graft COMPONENTS core)) loads graft::core alone.
install(TARGETS graft_core EXPORT graftCoreTargets INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
install(TARGETS graft EXPORT graftTargets
  ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}" NAMELINK_COMPONENT Development
  RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}"
  INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")

# The tool finds a shared libgraft next to it, wherever the prefix is moved.
get_target_property(_graft_type graft TYPE)
if(_graft_type STREQUAL "SHARED_LIBRARY" AND NOT APPLE AND NOT WIN32)
  file(RELATIVE_PATH _graft_rel "/${CMAKE_INSTALL_BINDIR}" "/${CMAKE_INSTALL_LIBDIR}")
  set_property(TARGET graft_cli APPEND PROPERTY INSTALL_RPATH "$ORIGIN/${_graft_rel}")
  unset(_graft_rel)
endif()
install(TARGETS graft_cli RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
# The sandboxed HDF5 reader, where libgraft looks for it (graft/hdf5_containment.hpp).
install(TARGETS graft_h5_reader RUNTIME DESTINATION "${CMAKE_INSTALL_LIBEXECDIR}/graft")

install(EXPORT graftCoreTargets NAMESPACE graft:: DESTINATION "${GRAFT_INSTALL_CMAKEDIR}")
install(EXPORT graftTargets NAMESPACE graft:: DESTINATION "${GRAFT_INSTALL_CMAKEDIR}")

# graftConfig.cmake: find_dependency for the public dependencies, and for the private ones too
# when libgraft is static (see cmake/graftConfig.cmake.in).
if(_graft_type STREQUAL "SHARED_LIBRARY")
  set(GRAFT_SHARED ON)
else()
  set(GRAFT_SHARED OFF)
endif()
unset(_graft_type)
configure_package_config_file(
  "${CMAKE_CURRENT_LIST_DIR}/graftConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/graftConfig.cmake"
  INSTALL_DESTINATION "${GRAFT_INSTALL_CMAKEDIR}"
  PATH_VARS GRAFT_INSTALL_PLUGINDIR GRAFT_INSTALL_BINDIR)

# Semantic versioning: before 1.0 a minor release may break the API, so only the same minor
# version is compatible (0.1.x satisfies find_package(graft 0.1)); from 1.0 on, the same major.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(_graft_compat SameMinorVersion)
else()
  set(_graft_compat SameMajorVersion)
endif()
write_basic_package_version_file("${PROJECT_BINARY_DIR}/graftConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}" COMPATIBILITY ${_graft_compat})
unset(_graft_compat)

install(FILES "${PROJECT_BINARY_DIR}/graftConfig.cmake" "${PROJECT_BINARY_DIR}/graftConfigVersion.cmake"
  DESTINATION "${GRAFT_INSTALL_CMAKEDIR}")
# graft_embed_text(), for plugins whose kernels are written once (graftConfig.cmake includes it).
install(FILES "${CMAKE_CURRENT_LIST_DIR}/GraftEmbed.cmake" DESTINATION "${GRAFT_INSTALL_CMAKEDIR}")
# graft_generate_model(), which graftConfig.cmake includes when it is there.
if(EXISTS "${CMAKE_CURRENT_LIST_DIR}/GraftGenerate.cmake")
  install(FILES "${CMAKE_CURRENT_LIST_DIR}/GraftGenerate.cmake" DESTINATION "${GRAFT_INSTALL_CMAKEDIR}")
endif()
install(FILES "${PROJECT_SOURCE_DIR}/README.md" "${PROJECT_SOURCE_DIR}/CHANGELOG.md" "${PROJECT_SOURCE_DIR}/docs/embedding.md"
  DESTINATION "${CMAKE_INSTALL_DOCDIR}")
