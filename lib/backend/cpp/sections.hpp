// The support sections of generated code not yet moved to lib/rt/graft_rt (each family moves its
// own; the generator asks lib/rt first).
#pragma once

#include <vector>

namespace graft::cpp {

/// One support section: a key, the keys it needs first, and its source.
struct Section {
    const char* key;
    std::vector<const char*> deps;
    const char* source;
};

/// Every built-in section (rt_*.cpp).
const std::vector<Section>& sections();
std::vector<Section> math_sections();      // rt_math.cpp: activations, affine, merge, softmax, norms, masks
std::vector<Section> layout_sections();    // rt_layout.cpp: transpose, concat, pad, resize, pooling
std::vector<Section> sequence_sections();  // rt_sequence.cpp: recurrent layers, attention
}  // namespace graft::cpp
