# graft_set_warnings(<target>...): the warning flags for graft's own targets (never third-party code).
option(GRAFT_WARNINGS_AS_ERRORS "Treat compiler warnings as errors in graft's own targets" ON)

function(graft_set_warnings)
  foreach(target IN LISTS ARGN)
    if(MSVC)
      target_compile_options(${target} PRIVATE /W4 $<$<BOOL:${GRAFT_WARNINGS_AS_ERRORS}>:/WX>)
    else()
      target_compile_options(${target} PRIVATE -Wall -Wextra $<$<BOOL:${GRAFT_WARNINGS_AS_ERRORS}>:-Werror>)
    endif()
  endforeach()
endfunction()
