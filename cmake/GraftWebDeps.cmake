# The header-only libraries the browser runtime compiles against, taken from the host (Debian's
# rapidjson-dev and libboost-dev): RapidJSON (graph.json) and Boost.CRC (the CRC-32 of
# weights.bin, where the host build uses zlib). Only those two directories are put on the include
# path, through links in the build tree: adding the host's /usr/include itself would put glibc's
# headers in front of Emscripten's.
foreach(_dep IN ITEMS "rapidjson:rapidjson/document.h" "boost:boost/crc.hpp")
  string(REPLACE ":" ";" _dep "${_dep}")
  list(GET _dep 0 _dir)
  list(GET _dep 1 _header)
  find_path(GRAFT_HOST_${_dir}_PREFIX "${_header}" PATHS /usr/include /usr/local/include NO_CMAKE_FIND_ROOT_PATH
            NO_DEFAULT_PATH)
  if(NOT GRAFT_HOST_${_dir}_PREFIX)
    message(FATAL_ERROR "the web build needs the host's ${_header} (Debian: rapidjson-dev libboost-dev)")
  endif()
  file(MAKE_DIRECTORY "${CMAKE_BINARY_DIR}/host-include")
  file(CREATE_LINK "${GRAFT_HOST_${_dir}_PREFIX}/${_dir}" "${CMAKE_BINARY_DIR}/host-include/${_dir}" SYMBOLIC)
endforeach()
unset(_dep)
unset(_dir)
unset(_header)
set(RAPIDJSON_INCLUDE_DIRS "${CMAKE_BINARY_DIR}/host-include")
set(GRAFT_WEB_BOOST_INCLUDE_DIR "${CMAKE_BINARY_DIR}/host-include")
