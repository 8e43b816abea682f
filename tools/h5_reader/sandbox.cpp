// The helper's confinement, set up before it opens the untrusted file: resource limits, then a
// seccomp filter that allows only what reading a file and answering on the socket need.
#include "sandbox.hpp"

#include <fcntl.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

// A sanitizer's shadow memory reserves terabytes of address space: no RLIMIT_AS under one. GCC
// says so with __SANITIZE_*__, clang with __has_feature.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define GRAFT_H5_READER_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define GRAFT_H5_READER_SANITIZED 1
#endif
#endif

namespace graft::h5_reader {

namespace {

/// "argument `arg` equals `v`" (libseccomp's SCMP_A0(SCMP_CMP_EQ, v) leaves datum_b to the
/// compiler, which clang's -Wmissing-field-initializers reports).
scmp_arg_cmp arg_equals(unsigned arg, scmp_datum_t v) { return scmp_arg_cmp{arg, SCMP_CMP_EQ, v, 0}; }

std::string set_limit(int resource, const char* name, rlim_t soft, rlim_t hard) {
    const rlimit r{soft, hard};
    if (::setrlimit(resource, &r) != 0) return std::string("setrlimit(") + name + "): " + std::strerror(errno);
    return {};
}

}  // namespace

std::string set_limits(std::uint64_t max_memory, std::uint64_t max_cpu_seconds) {
    std::string err;
    if (err.empty()) err = set_limit(RLIMIT_CORE, "RLIMIT_CORE", 0, 0);  // a crash leaves no core file
    if (err.empty()) err = set_limit(RLIMIT_FSIZE, "RLIMIT_FSIZE", 0, 0);  // no file grows
    if (err.empty()) err = set_limit(RLIMIT_NOFILE, "RLIMIT_NOFILE", 16, 16);
    if (err.empty()) err = set_limit(RLIMIT_NPROC, "RLIMIT_NPROC", 0, 0);
    // The soft limit sends SIGXCPU; the hard one, a second later, SIGKILL.
    if (err.empty()) err = set_limit(RLIMIT_CPU, "RLIMIT_CPU", max_cpu_seconds, max_cpu_seconds + 1);
#ifndef GRAFT_H5_READER_SANITIZED
    if (err.empty()) err = set_limit(RLIMIT_AS, "RLIMIT_AS", max_memory, max_memory);
#else
    (void)max_memory;
#endif
    return err;
}

std::string install_seccomp() {
    // Anything not listed kills the process (SIGSYS): no socket, connect, execve, fork/clone,
    // kill of other processes, ptrace, open for writing, ...
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
    if (ctx == nullptr) return "seccomp_init failed";
    int rc = 0;
    auto allow = [&](int sys) {
        if (rc == 0) rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, sys, 0);
    };
    auto allow_if = [&](int sys, scmp_arg_cmp cmp) {
        if (rc == 0) rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, sys, 1, cmp);
    };
    // Reading: the file (opened read-only), the requests on fd 0.
    for (int sys : {SCMP_SYS(read), SCMP_SYS(pread64), SCMP_SYS(readv), SCMP_SYS(preadv), SCMP_SYS(lseek),
                    SCMP_SYS(fstat), SCMP_SYS(newfstatat), SCMP_SYS(stat), SCMP_SYS(lstat), SCMP_SYS(statx),
                    SCMP_SYS(close), SCMP_SYS(fcntl), SCMP_SYS(flock), SCMP_SYS(getcwd), SCMP_SYS(readlink),
                    SCMP_SYS(readlinkat)})
        allow(sys);
    const scmp_datum_t write_bits = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND;
    allow_if(SCMP_SYS(openat), SCMP_A2(SCMP_CMP_MASKED_EQ, write_bits, 0));
    allow_if(SCMP_SYS(open), SCMP_A1(SCMP_CMP_MASKED_EQ, write_bits, 0));
    // Writing: replies on fd 1, and libc's last words (an abort message) on fd 2 (/dev/null).
    for (int sys : {SCMP_SYS(write), SCMP_SYS(writev)}) {
        allow_if(sys, arg_equals(0, 1));
        allow_if(sys, arg_equals(0, 2));
    }
    // Memory, never executable.
    for (int sys : {SCMP_SYS(brk), SCMP_SYS(munmap), SCMP_SYS(mremap), SCMP_SYS(madvise)}) allow(sys);
    allow_if(SCMP_SYS(mmap), SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
    allow_if(SCMP_SYS(mprotect), SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
    // Process basics: exit, signals to itself (abort), time.
    for (int sys : {SCMP_SYS(exit), SCMP_SYS(exit_group), SCMP_SYS(rt_sigreturn), SCMP_SYS(rt_sigprocmask),
                    SCMP_SYS(rt_sigaction), SCMP_SYS(futex), SCMP_SYS(getpid), SCMP_SYS(gettid),
                    SCMP_SYS(clock_gettime), SCMP_SYS(gettimeofday), SCMP_SYS(sched_yield)})
        allow(sys);
    allow_if(SCMP_SYS(tgkill), arg_equals(0, static_cast<scmp_datum_t>(::getpid())));
    if (rc == 0) rc = seccomp_load(ctx);  // sets no_new_privs first (the library's default)
    seccomp_release(ctx);
    return rc == 0 ? std::string() : std::string("seccomp: ") + std::strerror(-rc);
}

}  // namespace graft::h5_reader
