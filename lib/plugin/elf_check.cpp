#include "plugin/elf_check.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <vector>

#include "graft/error.hpp"

namespace graft::plugin {

namespace {

using Ehdr = ElfW(Ehdr);
using Phdr = ElfW(Phdr);
using Shdr = ElfW(Shdr);

constexpr std::uint64_t kMaxPluginBytes = std::uint64_t{1} << 31;  // 2 GiB: no plugin is larger

constexpr unsigned char kHostClass = sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
constexpr unsigned char kHostData = ELFDATA2LSB;
#else
constexpr unsigned char kHostData = ELFDATA2MSB;
#endif

/// The machine the running program was built for: its own ELF header says.
int host_machine() {
    static const int machine = [] {
        Ehdr self{};
        std::ifstream in("/proc/self/exe", std::ios::binary);
        if (in.read(reinterpret_cast<char*>(&self), sizeof self) && std::memcmp(self.e_ident, ELFMAG, SELFMAG) == 0)
            return static_cast<int>(self.e_machine);
#if defined(__x86_64__)
        return static_cast<int>(EM_X86_64);
#elif defined(__aarch64__)
        return static_cast<int>(EM_AARCH64);
#else
        return -1;  // unknown: not checked
#endif
    }();
    return machine;
}

/// Whether [offset, offset + count * entry) lies inside a file of `size` bytes.
bool table_inside(std::uint64_t offset, std::uint64_t count, std::uint64_t entry, std::uint64_t size) {
    std::uint64_t bytes = 0, end = 0;
    return !__builtin_mul_overflow(count, entry, &bytes) && !__builtin_add_overflow(offset, bytes, &end) && end <= size;
}

}  // namespace

void check_elf_file(const std::string& path, const std::string& shown) {
    auto fail = [&](const std::string& why) -> void {
        throw PluginError(shown + ": cannot load plugin: not a loadable shared object for this host (" + why + ")");
    };
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) fail("cannot open the file");
    const auto end = in.tellg();
    if (end < 0) fail("cannot tell the file's size");
    const auto size = static_cast<std::uint64_t>(end);
    in.seekg(0);
    Ehdr h{};
    in.read(reinterpret_cast<char*>(&h), sizeof h);
    if (in.gcount() >= SELFMAG && std::memcmp(h.e_ident, ELFMAG, SELFMAG) != 0) fail("not an ELF file");
    if (size < sizeof(Ehdr) || in.gcount() < static_cast<std::streamsize>(sizeof h))
        fail("the file has " + std::to_string(size) + " bytes, too short for an ELF header");
    if (size > kMaxPluginBytes) fail("the file has " + std::to_string(size) + " bytes, more than 2 GiB");
    if (h.e_ident[EI_CLASS] != kHostClass)
        fail(std::string("an ELF of class ") + (h.e_ident[EI_CLASS] == ELFCLASS32 ? "32-bit" : h.e_ident[EI_CLASS] == ELFCLASS64 ? "64-bit" : "unknown") +
             ", this host is " + (kHostClass == ELFCLASS64 ? "64-bit" : "32-bit"));
    if (h.e_ident[EI_DATA] != kHostData) fail("an ELF of the other byte order");
    if (h.e_ident[EI_VERSION] != EV_CURRENT || h.e_version != EV_CURRENT) fail("an unknown ELF version");
    if (h.e_type != ET_DYN) fail("ELF type " + std::to_string(h.e_type) + ", a shared object is ET_DYN (" + std::to_string(ET_DYN) + ")");
    const int machine = host_machine();
    if (machine >= 0 && h.e_machine != machine)
        fail("built for ELF machine " + std::to_string(h.e_machine) + ", this host is " + std::to_string(machine));
    if (h.e_ehsize < sizeof(Ehdr)) fail("the ELF header size " + std::to_string(h.e_ehsize) + " is too small");
    if (h.e_phnum == 0 || h.e_phentsize != sizeof(Phdr)) fail("no usable program header table");
    if (!table_inside(h.e_phoff, h.e_phnum, h.e_phentsize, size)) fail("the program header table lies outside the file (truncated?)");
    if (h.e_shnum != 0 && (h.e_shentsize != sizeof(Shdr) || !table_inside(h.e_shoff, h.e_shnum, h.e_shentsize, size)))
        fail("the section header table lies outside the file (truncated?)");

    // Every segment the loader maps must be in the file: a page past its end is a SIGBUS.
    std::vector<Phdr> ph(h.e_phnum);
    in.seekg(static_cast<std::streamoff>(h.e_phoff));
    if (!in.read(reinterpret_cast<char*>(ph.data()), static_cast<std::streamsize>(ph.size() * sizeof(Phdr))))
        fail("cannot read the program header table");
    bool loadable = false;
    for (const auto& p : ph) {
        if (p.p_type != PT_LOAD && p.p_type != PT_DYNAMIC) continue;
        loadable = loadable || p.p_type == PT_LOAD;
        if (p.p_filesz > p.p_memsz && p.p_type == PT_LOAD) fail("a loadable segment is larger in the file than in memory");
        if (!table_inside(p.p_offset, 1, p.p_filesz, size))
            fail("a " + std::string(p.p_type == PT_LOAD ? "loadable" : "dynamic") + " segment at offset " + std::to_string(p.p_offset) +
                 " of " + std::to_string(p.p_filesz) + " bytes ends past the file's " + std::to_string(size) + " bytes (truncated?)");
    }
    if (!loadable) fail("no loadable segment");
}

namespace {

struct Lookup {
    std::uintptr_t addr;
    bool executable = false;
};

}  // namespace

void check_entry_symbol(const void* addr, const char* name, const std::string& shown) {
    Dl_info info{};
    void* entry = nullptr;  // the symbol's ElfW(Sym)
    if (!addr || !dladdr1(addr, &info, &entry, RTLD_DL_SYMENT) || !entry)
        throw PluginError(shown + ": the plugin's entry point '" + name + "' cannot be resolved to a symbol");
    const unsigned type = ELF64_ST_TYPE(static_cast<const ElfW(Sym)*>(entry)->st_info);
    if (type != STT_FUNC && type != STT_GNU_IFUNC)
        throw PluginError(shown + ": the plugin's entry point '" + name + "' is not a function (ELF symbol type " +
                          std::to_string(type) + "); not a graft plugin, or a corrupt one");
    Lookup l{reinterpret_cast<std::uintptr_t>(addr)};
    dl_iterate_phdr(
        [](dl_phdr_info* obj, std::size_t, void* data) {
            auto* look = static_cast<Lookup*>(data);
            for (ElfW(Half) i = 0; i < obj->dlpi_phnum; ++i) {
                const auto& p = obj->dlpi_phdr[i];
                const std::uintptr_t begin = obj->dlpi_addr + p.p_vaddr;
                if (p.p_type == PT_LOAD && look->addr >= begin && look->addr - begin < p.p_memsz) {
                    look->executable = (p.p_flags & PF_X) != 0;
                    return 1;
                }
            }
            return 0;
        },
        &l);
    if (!l.executable)
        throw PluginError(shown + ": the plugin's entry point '" + name + "' is not in an executable segment; not a graft plugin, or a corrupt one");
}

}  // namespace graft::plugin
