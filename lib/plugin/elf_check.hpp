// Checks on a plugin file before and after the dynamic loader sees it (issue 17): a truncated or
// foreign shared object must become a PluginError, not a SIGBUS inside dlopen, and an entry
// symbol that is data must not be called.
#pragma once

#include <string>

namespace graft::plugin {

/// PluginError (naming `shown`) unless the file at `path` is a plausible shared object for this
/// process: a sane size, an ELF header of this host's class, byte order and machine, type ET_DYN,
/// and its program headers, section headers and loadable segments inside the file.
void check_elf_file(const std::string& path, const std::string& shown);

/// PluginError (naming `shown`) unless `addr`, the address of symbol `name` in a loaded library,
/// is a function symbol in an executable segment.
void check_entry_symbol(const void* addr, const char* name, const std::string& shown);

}  // namespace graft::plugin
