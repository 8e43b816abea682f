# graft_generate_model(): runs `graft convert --backend cpp` at build time and adds the generated
# C++ to a target. The generated code needs only the C++17 standard library; nothing of graft is
# linked.
#
#   include(GraftGenerate)           # from graft's cmake/ directory (or an installed graft)
#   add_executable(classify main.cpp)
#   graft_generate_model(TARGET classify MODEL ${CMAKE_CURRENT_SOURCE_DIR}/iris.h5 NAME iris BATCH 1)
#   # main.cpp: #include "iris.hpp"  ...  iris::Session s(IRIS_WEIGHTS);  (see below)
#
# Arguments:
#   TARGET t          the target that gets <NAME>.cpp (and <NAME>_weights.cpp) and the include directory
#   MODEL file        the Keras model (.h5, .keras) or a graft descriptor directory
#   NAME n            base name of the files and default namespace (default: the model file's stem)
#   NAMESPACE ns      C++ namespace of the generated code (default: NAME)
#   BATCH n           batch size the code is generated for (default 1)
#   OPT_LEVEL n       graft's optimization level 0..2 (default 2)
#   EMBED_WEIGHTS     compile the weights in (<NAME>_weights.cpp) instead of a <NAME>.weights file
#   PLUGINS so...     graft plugins the model needs (their op types must have C++ emitters)
#   OUTPUT_DIR dir    where the files go (default: ${CMAKE_CURRENT_BINARY_DIR}/graft_generated/<NAME>)
#   GRAFT exe         the graft tool (default: the graft_cli target of a graft source tree in the same
#                     build, else the GRAFT_EXECUTABLE cache variable, else `graft` on the PATH)
#   WEIGHTS_VARIABLE v  sets v in the caller's scope to the weights file's path (file weights only);
#                     the target also gets the definition <NAME upper>_WEIGHTS="<path>"
#
# The files are regenerated when the model (or the graft tool, when it is a target) changes.
function(graft_generate_model)
  cmake_parse_arguments(G "EMBED_WEIGHTS" "TARGET;MODEL;NAME;NAMESPACE;BATCH;OPT_LEVEL;OUTPUT_DIR;GRAFT;WEIGHTS_VARIABLE"
                        "PLUGINS" ${ARGN})
  if(NOT G_TARGET OR NOT G_MODEL)
    message(FATAL_ERROR "graft_generate_model: TARGET and MODEL are required")
  endif()
  if(G_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "graft_generate_model: unknown arguments ${G_UNPARSED_ARGUMENTS}")
  endif()
  get_filename_component(_model "${G_MODEL}" ABSOLUTE)
  if(NOT G_NAME)
    get_filename_component(G_NAME "${_model}" NAME_WE)
  endif()
  string(MAKE_C_IDENTIFIER "${G_NAME}" G_NAME)
  if(NOT G_BATCH)
    set(G_BATCH 1)
  endif()
  if(NOT G_OPT_LEVEL)
    set(G_OPT_LEVEL 2)
  endif()
  if(NOT G_OUTPUT_DIR)
    set(G_OUTPUT_DIR "${CMAKE_CURRENT_BINARY_DIR}/graft_generated/${G_NAME}")
  endif()

  set(_depends "${_model}")
  if(G_GRAFT)
    set(_graft "${G_GRAFT}")
  elseif(TARGET graft_cli)
    set(_graft "$<TARGET_FILE:graft_cli>")
    list(APPEND _depends graft_cli)
  else()
    find_program(GRAFT_EXECUTABLE graft DOC "the graft command-line tool")
    if(NOT GRAFT_EXECUTABLE)
      message(FATAL_ERROR "graft_generate_model: the graft tool was not found; set GRAFT_EXECUTABLE or pass GRAFT")
    endif()
    set(_graft "${GRAFT_EXECUTABLE}")
  endif()

  set(_args convert "${_model}" --backend cpp --name "${G_NAME}" --batch "${G_BATCH}" "-O${G_OPT_LEVEL}" -o "${G_OUTPUT_DIR}")
  if(G_NAMESPACE)
    list(APPEND _args --namespace "${G_NAMESPACE}")
  endif()
  foreach(_plugin IN LISTS G_PLUGINS)
    list(APPEND _args --plugin "${_plugin}")
    list(APPEND _depends "${_plugin}")
  endforeach()
  set(_outputs "${G_OUTPUT_DIR}/${G_NAME}.hpp" "${G_OUTPUT_DIR}/${G_NAME}.cpp")
  set(_sources "${G_OUTPUT_DIR}/${G_NAME}.cpp")
  if(G_EMBED_WEIGHTS)
    list(APPEND _args --embed-weights)
    list(APPEND _outputs "${G_OUTPUT_DIR}/${G_NAME}_weights.cpp")
    list(APPEND _sources "${G_OUTPUT_DIR}/${G_NAME}_weights.cpp")
  else()
    list(APPEND _outputs "${G_OUTPUT_DIR}/${G_NAME}.weights")
  endif()

  add_custom_command(
    OUTPUT ${_outputs}
    COMMAND "${_graft}" ${_args}
    DEPENDS ${_depends}
    COMMENT "graft: generating C++ for ${G_MODEL} (batch ${G_BATCH})"
    VERBATIM)
  target_sources(${G_TARGET} PRIVATE ${_sources})
  target_include_directories(${G_TARGET} PRIVATE "${G_OUTPUT_DIR}")
  target_compile_features(${G_TARGET} PRIVATE cxx_std_17)
  if(NOT G_EMBED_WEIGHTS)
    string(TOUPPER "${G_NAME}" _upper)
    target_compile_definitions(${G_TARGET} PRIVATE "${_upper}_WEIGHTS=\"${G_OUTPUT_DIR}/${G_NAME}.weights\"")
    if(G_WEIGHTS_VARIABLE)
      set(${G_WEIGHTS_VARIABLE} "${G_OUTPUT_DIR}/${G_NAME}.weights" PARENT_SCOPE)
    endif()
  endif()
endfunction()
