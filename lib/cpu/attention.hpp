// Multi-head dot-product attention on the GEMM: graft_rt::attention's dot score (the same
// scale, causal and key masks, softmax), one (batch, head) pair per task.
#pragma once

#include <cstdint>

#include "graft_rt/attention.hpp"

namespace graft::cpu {

class ThreadPool;

/// Scratch floats one task needs: K's head transposed into the GEMM's panels [dk, tv rounded up
/// to 16] and the scores of up to 256 queries [min(tq, 256), tv].
std::int64_t attention_dot_floats(const graft_rt::AttentionParams& p);

/// y [b, tq, heads*dv] = softmax(scale * q k^T, masked) v for every head, q and k [b, t,
/// heads*dk], v [b, tv, heads*dv] (or, p.packed, q = k = v [b, t, 3*heads*dk]), vmask [b, tv]
/// or null; p.score must be dot. `work` holds
/// `max_tasks` times attention_dot_floats(p); the (batch, head) pairs split over `pool`, at most
/// max_tasks at a time. Scores of masked keys drop by 1e9 after scaling, as graft_rt::attention's.
void attention_dot(const float* q, const float* k, const float* v, const float* vmask, float* y,
                   const graft_rt::AttentionParams& p, float* work, int max_tasks, ThreadPool* pool);

}  // namespace graft::cpu
