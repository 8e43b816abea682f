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
  # clang cannot vectorize the instrumented loops the kernels ask it to (#pragma clang loop
  # vectorize / omp simd) and says so with a warning; the kernels are correct either way.
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    add_compile_options(-Wno-pass-failed)
    # Third-party headers whose known UB clang reports (cmake/ubsan_ignorelist.txt says which).
    if("undefined" IN_LIST GRAFT_SANITIZERS)
      add_compile_options("-fsanitize-ignorelist=${CMAKE_CURRENT_LIST_DIR}/ubsan_ignorelist.txt")
    endif()
  endif()
endif()

# GRAFT_BUILD_FUZZERS: libFuzzer targets (tests/fuzz/). Everything in the tree gets libFuzzer's
# coverage instrumentation (-fsanitize=fuzzer-no-link), so the fuzzers see the library's branches;
# only the fuzz targets themselves link libFuzzer's main (-fsanitize=fuzzer).
option(GRAFT_BUILD_FUZZERS "Build the libFuzzer targets in tests/fuzz (clang)" OFF)
if(GRAFT_BUILD_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "GRAFT_BUILD_FUZZERS needs clang (libFuzzer); use the `fuzz` preset")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
  add_link_options(-fsanitize=fuzzer-no-link)
endif()
