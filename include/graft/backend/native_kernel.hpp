// graft/backend/native_kernel.hpp - what a native (in-process CPU) generator handler produces.
//
// The native backend compiles a graph once: for every operator it calls the generator handler
// registered for (native, op type), which returns a Kernel bound to fixed locations. Running the
// program calls each kernel once, in order, with the session's arena. Header-only, so a plugin
// can add kernels without linking graft.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "graft/ir/operator.hpp"
#include "graft/precision.hpp"

namespace graft::cpu {
class ThreadPool;  // lib/cpu/threadpool.hpp (opaque to plugins)
}

namespace graft::native {

/// Where a tensor lives while the program runs: at an offset in the session's arena, or in
/// constant memory owned by the compiled program (weights, read-only).
struct Slot {
    const float* constant = nullptr;
    std::size_t offset = 0;

    float* get(std::byte* arena) const noexcept {
        return constant ? const_cast<float*>(constant) : reinterpret_cast<float*>(arena + offset);
    }
};


/// Per-run state handed to every kernel.
struct RunContext {
    std::byte* arena = nullptr;
    /// The session's intra-op thread pool, or null (run on the calling thread). Built-in
    /// kernels split their work over it; a plugin kernel may ignore it.
    cpu::ThreadPool* pool = nullptr;
    float* at(const Slot& s) const noexcept { return s.get(arena); }
};

/// A compiled operator. run() must not allocate, lock or throw; everything it needs was
/// decided when it was built.
class Kernel {
public:
    virtual ~Kernel() = default;
    virtual void run(const RunContext& ctx) const = 0;
};

/// What a kernel builder may ask while it builds a kernel. All shapes are concrete here
/// (the batch is fixed for the program being compiled).
class BuildContext {
public:
    virtual ~BuildContext() = default;
    virtual const Operator& op() const = 0;
    /// Where an input or output variable of this operator lives.
    virtual Slot slot(const Variable* v) = 0;
    /// Keeps a block of read-only data (e.g. prepacked weights) alive as long as the program
    /// and returns a pointer to it.
    virtual const float* keep(std::shared_ptr<const std::vector<float>> data) = 0;
    /// Scratch memory for the duration of one kernel run (shared between kernels).
    virtual Slot workspace(std::size_t floats) = 0;
    /// keep(make()), shared between the programs one Model compiles (one per batch size or input
    /// shape): a block made from the same constant `source` with the same `tag` is made once and
    /// reused. `tag` must name everything the block depends on besides `source`'s values (the
    /// layout and its sizes), since `make` is not called when the block exists.
    virtual const float* keep_shared(const ConstantVariable& /*source*/, const std::string& /*tag*/,
                                     const std::function<std::vector<float>()>& make) {
        return keep(std::make_shared<const std::vector<float>>(make()));
    }

    /// The arithmetic the model asked for (LoadOptions::precision), already fp32 where this CPU
    /// would not run int8 faster. A kernel may honour it or run in fp32.
    virtual Precision precision() const { return Precision::fp32; }

    Slot in(const std::string& name) { return slot(op().input(name)); }
    Slot out(const std::string& name) { return slot(op().output(name)); }
};

/// The native backend's generator for an op type: a *kernel builder*, called once per compiled
/// program with the operator (concrete shapes) and returning its kernel.
using KernelBuilder = std::function<std::unique_ptr<Kernel>(BuildContext&)>;

/// The native backend's tag: `registry.add_generator<native::Backend>("MyOp", build_my_op)`.
struct Backend {
    static constexpr const char* name = "native";
    using Generator = KernelBuilder;
};

/// A kernel made from a lambda, for handlers that need no state beyond captures.
template <class F>
class LambdaKernel final : public Kernel {
public:
    explicit LambdaKernel(F f) : f_(std::move(f)) {}
    void run(const RunContext& ctx) const override { f_(ctx); }

private:
    F f_;
};

template <class F>
std::unique_ptr<Kernel> make_kernel(F f) {
    return std::make_unique<LambdaKernel<F>>(std::move(f));
}

}  // namespace graft::native
