#include "frontend/findings.hpp"

#include "graft/error.hpp"
#include "graft/printable.hpp"

namespace graft::frontend {

void throw_findings(const std::string& path, const CheckReport& r, const std::string& noun) {
    const auto& f = r.findings;
    std::string msg = path + ": " + std::to_string(f.size()) + " " + noun + (f.size() == 1 ? "" : "s") + " cannot be converted:";
    for (std::size_t i = 0; i < f.size(); ++i)
        msg += (i ? "; " : " ") + std::string("'") + printable(f[i].layer) + "' (" + printable(f[i].class_name) + "): " + printable(f[i].message);
    if (!r.unchecked.empty())
        msg += " (" + std::to_string(r.unchecked.size()) + " " + noun + (r.unchecked.size() == 1 ? "" : "s") +
               " after them not checked: their inputs come from a refused " + noun + ")";
    throw UnsupportedError(msg);
}

}  // namespace graft::frontend
