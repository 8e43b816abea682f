# The API reference, built from the public headers with Doxygen (Debian `doxygen`):
#
#   cmake --build build/dev --target docs      ->  build/dev/docs/api/html/index.html
#
# Any Doxygen warning about the public headers fails the build (WARN_AS_ERROR, see Doxyfile.in).
# The target exists only when Doxygen is found; the CTest test docs_api (label `docs`) runs the
# same command and is skipped (exit 77) when Doxygen is missing.
find_package(Doxygen QUIET)

set(GRAFT_DOCS_DIR "${PROJECT_BINARY_DIR}/docs/api")
configure_file("${PROJECT_SOURCE_DIR}/Doxyfile.in" "${PROJECT_BINARY_DIR}/Doxyfile" @ONLY)

if(TARGET Doxygen::doxygen)
  add_custom_target(docs
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${GRAFT_DOCS_DIR}"
    COMMAND Doxygen::doxygen "${PROJECT_BINARY_DIR}/Doxyfile"
    WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
    COMMENT "API reference (Doxygen) -> ${GRAFT_DOCS_DIR}/html/index.html"
    VERBATIM)
endif()
