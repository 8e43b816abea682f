// The table of support sections not yet moved to lib/rt/graft_rt.
#include "backend/cpp/sections.hpp"

namespace graft::cpp {

const std::vector<Section>& sections() {
    static const std::vector<Section> all = [] {
        std::vector<Section> s;
        for (auto part : {math_sections(), layout_sections(), sequence_sections()})
            s.insert(s.end(), part.begin(), part.end());
        return s;
    }();
    return all;
}

}  // namespace graft::cpp
