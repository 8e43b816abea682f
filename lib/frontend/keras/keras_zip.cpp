#include "frontend/keras/keras_zip.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <vector>

#include <unistd.h>
#include <zip.h>

#include "graft/error.hpp"

namespace graft::keras {

namespace {

struct ZipCloser {
    void operator()(zip_t* z) const { zip_discard(z); }  // read-only: never writes anything back
};
struct FileCloser {
    void operator()(zip_file_t* f) const { zip_fclose(f); }
};
using Zip = std::unique_ptr<zip_t, ZipCloser>;

/// Index and declared uncompressed size of an entry; false if absent.
bool locate(zip_t* z, const std::string& path, const char* name, std::uint64_t limit, zip_uint64_t& index,
            std::uint64_t& size) {
    const zip_int64_t i = zip_name_locate(z, name, 0);
    if (i < 0) return false;
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(z, static_cast<zip_uint64_t>(i), 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE))
        throw FormatError(path + ": cannot read the size of " + name + " in the archive: " + zip_strerror(z));
    if (st.size > limit)
        throw FormatError(path + ": " + name + " declares " + std::to_string(st.size) + " bytes uncompressed, more than the limit of " +
                          std::to_string(limit));
    index = static_cast<zip_uint64_t>(i);
    size = st.size;
    return true;
}

/// Streams an entry to `sink` in chunks, never more than its declared size.
template <class Sink>
void read_entry(zip_t* z, const std::string& path, const char* name, zip_uint64_t index, std::uint64_t size, Sink sink) {
    std::unique_ptr<zip_file_t, FileCloser> f(zip_fopen_index(z, index, 0));
    if (!f) throw FormatError(path + ": cannot open " + name + " in the archive: " + zip_strerror(z));
    std::vector<char> buf(1 << 16);
    std::uint64_t got = 0;
    while (got < size) {
        const auto want = static_cast<zip_uint64_t>(std::min<std::uint64_t>(buf.size(), size - got));
        const zip_int64_t n = zip_fread(f.get(), buf.data(), want);
        if (n < 0) throw FormatError(path + ": " + name + " is corrupt: " + zip_file_strerror(f.get()));
        if (n == 0) break;
        sink(buf.data(), static_cast<std::size_t>(n));
        got += static_cast<std::uint64_t>(n);
    }
    if (got != size)
        throw FormatError(path + ": " + name + " holds " + std::to_string(got) + " bytes, its header says " + std::to_string(size));
}

std::string read_text(zip_t* z, const std::string& path, const char* name, std::uint64_t limit, bool required) {
    zip_uint64_t index = 0;
    std::uint64_t size = 0;
    if (!locate(z, path, name, limit, index, size)) {
        if (required) throw FormatError(path + ": the .keras archive has no " + name);
        return {};
    }
    std::string out;
    out.reserve(static_cast<std::size_t>(size));
    read_entry(z, path, name, index, size, [&](const char* p, std::size_t n) { out.append(p, n); });
    return out;
}

}  // namespace

bool is_zip_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    char magic[4] = {};
    return in.read(magic, 4) && magic[0] == 'P' && magic[1] == 'K' && magic[2] == 3 && magic[3] == 4;
}

KerasArchive read_keras_archive(const std::string& path, const ZipLimits& limits) {
    int err = 0;
    Zip z(zip_open(path.c_str(), ZIP_RDONLY, &err));
    if (!z) {
        zip_error_t e;
        zip_error_init_with_code(&e, err);
        std::string msg = zip_error_strerror(&e);
        zip_error_fini(&e);
        if (err == ZIP_ER_OPEN || err == ZIP_ER_NOENT || err == ZIP_ER_READ) throw IOError(path + ": cannot read: " + msg);
        throw FormatError(path + ": not a readable .keras (zip) archive: " + msg);
    }
    KerasArchive a;
    a.config = read_text(z.get(), path, "config.json", limits.max_json, true);
    a.metadata = read_text(z.get(), path, "metadata.json", limits.max_json, false);

    zip_uint64_t index = 0;
    std::uint64_t size = 0;
    if (!locate(z.get(), path, "model.weights.h5", limits.max_weights, index, size))
        throw FormatError(path + ": the .keras archive has no model.weights.h5");
    const char* dir = std::getenv("TMPDIR");
    std::string tmpl = std::string(dir && *dir ? dir : "/tmp") + "/graft-keras-weights-XXXXXX";
    std::vector<char> name(tmpl.begin(), tmpl.end());
    name.push_back('\0');
    const int fd = mkstemp(name.data());  // O_EXCL, mode 0600
    if (fd < 0) throw IOError(path + ": cannot create a temporary file for model.weights.h5 in " + tmpl);
    a.weights_path = name.data();
    bool open = true;
    try {
        read_entry(z.get(), path, "model.weights.h5", index, size, [&](const char* p, std::size_t n) {
            while (n) {
                const ssize_t w = ::write(fd, p, n);
                if (w <= 0) throw IOError(path + ": cannot write the temporary file " + a.weights_path);
                p += w;
                n -= static_cast<std::size_t>(w);
            }
        });
        open = false;
        if (::close(fd) != 0) throw IOError(path + ": cannot write the temporary file " + a.weights_path);
    } catch (...) {
        if (open) ::close(fd);
        std::remove(a.weights_path.c_str());
        throw;
    }
    return a;
}

}  // namespace graft::keras
