# GRAFT_SANITIZERS: a list of sanitizers (e.g. "address;undefined") applied to everything built in
# this tree, tests included, so instrumented and plain code never mix. Empty by default.
set(GRAFT_SANITIZERS "" CACHE STRING "Sanitizers to build with, e.g. address;undefined")

if(GRAFT_SANITIZERS)
  list(JOIN GRAFT_SANITIZERS "," _graft_sanitizers)
  add_compile_options(-fsanitize=${_graft_sanitizers} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${_graft_sanitizers})
  unset(_graft_sanitizers)
  # GCC's flow analysis sees the instrumentation and reports false maybe-uninitialized warnings
  # (e.g. inside libstdc++'s <regex>, which xtensor's npy reader includes).
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    add_compile_options(-Wno-maybe-uninitialized)
  endif()
endif()
