// graft/export.hpp - GRAFT_API: what libgraft exports.
//
// libgraft is built with hidden visibility: only declarations marked GRAFT_API (the host API of
// graft.hpp, verify.hpp, frontend/keras.hpp, backend/descriptor.hpp, optimize/passes.hpp and the
// plugin loader of plugin.hpp) are exported from the shared library. The header-only core (IR,
// registry, plugin ABI) is inline code and needs no export.
//
// This is the header CMake's GenerateExportHeader would write, kept in include/ rather than
// generated into the build tree, because plugin.hpp (part of the core a plugin builds from
// include/ alone) declares the host-side loader and must compile without a configured build.
//  - graft_EXPORTS is defined by CMake while building the shared library itself;
//  - GRAFT_STATIC_DEFINE is defined for everything that links the static library (CMake sets it
//    as a usage requirement of graft::graft when BUILD_SHARED_LIBS is OFF).
#pragma once

#if defined(GRAFT_STATIC_DEFINE)
#define GRAFT_API
#elif defined(_WIN32)
#if defined(graft_EXPORTS)
#define GRAFT_API __declspec(dllexport)
#else
#define GRAFT_API __declspec(dllimport)
#endif
#else
#define GRAFT_API __attribute__((visibility("default")))
#endif
