// Keras 3 native `.keras` files: a zip holding config.json, metadata.json and model.weights.h5.
// Read with libzip; every entry's declared size is checked against a limit before it is read,
// and reading stops at the declared size (zip bombs, lying headers).
#pragma once

#include <cstdint>
#include <string>

namespace graft::keras {

/// True if the file starts with a zip local-file header ("PK\3\4").
bool is_zip_file(const std::string& path);

struct KerasArchive {
    std::string config;    ///< config.json
    std::string metadata;  ///< metadata.json ("" if absent)
    /// model.weights.h5, extracted to a fresh private temporary file (mkstemp, mode 0600); the
    /// caller opens it and removes it.
    std::string weights_path;
};

/// Limits on what is read from an archive.
struct ZipLimits {
    std::uint64_t max_json = std::uint64_t{64} << 20;     ///< config.json, metadata.json
    std::uint64_t max_weights = std::uint64_t{8} << 30;   ///< model.weights.h5
};

/// Opens a .keras archive. IOError if it cannot be read, FormatError if it is not a zip or lacks
/// config.json / model.weights.h5, or an entry exceeds its limit.
KerasArchive read_keras_archive(const std::string& path, const ZipLimits& limits = {});

}  // namespace graft::keras
