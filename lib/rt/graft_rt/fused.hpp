// graft_rt/fused.hpp - the program of a FusedElementwise op (lib/ops/fused/fused.hpp) as kernels
// run it: a short list of steps over values that all have the output's element count, evaluated
// block by block (kFusedBlock elements at a time), each step one loop over the block.
//
// Values are numbered: 0 .. n_inputs-1 are the inputs, n_inputs + s is the result of step s. An
// input is either read in place (the output's shape) or broadcast: element i of the output reads
// x[(i / inner) % len] (one value per index of some adjacent axes, or one value for all when
// len = inner = 1); a broadcast input is gathered into a block buffer first.
#pragma once

#include <algorithm>
#include <cstring>

#include "graft_rt/act.hpp"

namespace graft_rt {

constexpr i64 kFusedBlock = 512;
/// Block buffers a program may use (gathered broadcasts + intermediate results): 32 KB.
constexpr int kFusedMaxBuffers = 16;
constexpr int kFusedMaxInputs = 64;
constexpr int kFusedMaxSteps = 64;

enum class FusedCode : int {
    add, sub, mul, max, min,
    prelu,  // a < 0 ? b * a : a
    div,    // a / scalar
    act,    // act(a)
};

struct FusedOperand {
    bool broadcast = false;
    i64 len = 1, inner = 1;  // broadcast geometry
    int buffer = -1;         // block buffer of a broadcast input (set by fused_allocate)
};

struct FusedStep {
    FusedCode code = FusedCode::add;
    int a = 0, b = -1;  // value numbers; b = -1 for unary steps
    ActParams act{};
    float scalar = 1.f;
    int buffer = -1;  // block buffer of the result; -1 for the last step (written to y)
};

struct FusedProgram {
    int n_inputs = 0, n_steps = 0;
    int buffers = 0;  // block buffers used (set by fused_allocate)
    FusedOperand inputs[kFusedMaxInputs];
    FusedStep steps[kFusedMaxSteps];

    /// Appends an input (at most kFusedMaxInputs) or a step (at most kFusedMaxSteps); returns
    /// the number of its value.
    int add_input(const FusedOperand& in) {
        inputs[n_inputs] = in;
        return n_inputs++;
    }
    int add_step(const FusedStep& s) {
        steps[n_steps] = s;
        return n_inputs + n_steps++;
    }
};

/// Assigns block buffers: one per broadcast input, and to each step but the last a buffer that
/// neither a value still needed nor the step's own operands hold (an activation vectorizes only
/// when its input and output differ). Returns the number used (p.buffers).
inline int fused_allocate(FusedProgram& p) {
    const int n_in = p.n_inputs, n_steps = p.n_steps;
    int used = 0;
    for (int i = 0; i < n_in; ++i) p.inputs[i].buffer = p.inputs[i].broadcast ? used++ : -1;
    int last[kFusedMaxSteps], holder[kFusedMaxSteps], free_list[kFusedMaxSteps];  // per step: last reader, its buffer
    for (int s = 0; s < n_steps; ++s) last[s] = holder[s] = -1;
    for (int s = 0; s < n_steps; ++s)
        for (int v : {p.steps[s].a, p.steps[s].b})
            if (v >= n_in) last[v - n_in] = s;
    int n_free = 0;
    for (int s = 0; s < n_steps; ++s) {
        FusedStep& st = p.steps[s];
        if (s == n_steps - 1) {
            st.buffer = -1;
            break;
        }
        st.buffer = n_free > 0 ? free_list[--n_free] : used++;
        holder[s] = st.buffer;
        // operands whose last use is this step free their buffers for the next steps
        for (int v : {st.a, st.b})
            if (v >= n_in && last[v - n_in] == s && holder[v - n_in] >= 0) {
                free_list[n_free++] = holder[v - n_in];
                holder[v - n_in] = -1;
            }
    }
    p.buffers = used;
    return used;
}

/// dst[j] = x[((start + j) / inner) % len] for j < m: the values of a broadcast input for one
/// block, without a division per element.
inline void broadcast_block(const float* x, i64 len, i64 inner, i64 start, i64 m, float* dst) {
    if (len == 1) {
        const float v = x[0];
        for (i64 j = 0; j < m; ++j) dst[j] = v;
        return;
    }
    i64 c = (start / inner) % len;
    if (inner == 1) {  // runs of x itself (a bias over the last axis): plain copies
        for (i64 j = 0; j < m;) {
            const i64 run = std::min(len - c, m - j);
            std::memcpy(dst + j, x + c, bytes(run));
            j += run;
            c = 0;
        }
        return;
    }
    i64 r = start % inner;
    for (i64 j = 0; j < m;) {
        const i64 run = std::min(inner - r, m - j);  // elements of one broadcast value
        const float v = x[c];
        for (i64 k = 0; k < run; ++k) dst[j + k] = v;
        j += run;
        r = 0;
        if (++c == len) c = 0;
    }
}

/// One step over m elements: y[j] = a[j] (op) b[j] (b null for unary steps). y may be a or b.
inline void fused_step(const FusedStep& st, const float* a, const float* b, float* y, i64 m) {
    switch (st.code) {
        case FusedCode::add: for (i64 j = 0; j < m; ++j) y[j] = a[j] + b[j]; return;
        case FusedCode::sub: for (i64 j = 0; j < m; ++j) y[j] = a[j] - b[j]; return;
        case FusedCode::mul: for (i64 j = 0; j < m; ++j) y[j] = a[j] * b[j]; return;
        case FusedCode::max: for (i64 j = 0; j < m; ++j) y[j] = b[j] > a[j] ? b[j] : a[j]; return;
        case FusedCode::min: for (i64 j = 0; j < m; ++j) y[j] = b[j] < a[j] ? b[j] : a[j]; return;
        case FusedCode::prelu: for (i64 j = 0; j < m; ++j) y[j] = a[j] < 0.f ? b[j] * a[j] : a[j]; return;
        case FusedCode::div: for (i64 j = 0; j < m; ++j) y[j] = a[j] / st.scalar; return;
        case FusedCode::act: activation(a, y, m, st.act); return;
    }
}

/// Elements [begin, end) of the program's output y; xs[i] is input i. p is allocated
/// (fused_allocate) and uses at most kFusedMaxBuffers buffers. y may be the memory of an input
/// with y's shape: each block reads its inputs before the last step writes y.
inline void fused_elementwise(const FusedProgram& p, const float* const* xs, float* y, i64 begin, i64 end) {
    float buf[kFusedMaxBuffers][kFusedBlock];
    const float* vals[kFusedMaxInputs + kFusedMaxSteps];  // each value's block: inputs, then steps
    for (i64 i0 = begin; i0 < end; i0 += kFusedBlock) {
        const i64 m = std::min(kFusedBlock, end - i0);
        for (int i = 0; i < p.n_inputs; ++i) {
            const FusedOperand& in = p.inputs[i];
            if (in.broadcast) broadcast_block(xs[i], in.len, in.inner, i0, m, buf[in.buffer]);
            vals[i] = in.broadcast ? buf[in.buffer] : xs[i] + i0;
        }
        for (int s = 0; s < p.n_steps; ++s) {
            const FusedStep& st = p.steps[s];
            float* out = st.buffer < 0 ? y + i0 : buf[st.buffer];
            fused_step(st, vals[st.a], st.b >= 0 ? vals[st.b] : nullptr, out, m);
            vals[p.n_inputs + s] = out;
        }
    }
}

}  // namespace graft_rt
