// An intra-op thread pool: a fixed set of workers that run the chunks of one parallel loop.
//
// Kernels split their work with parallel_for(); the calling thread takes part, so a pool of
// size 1 has no worker and runs everything inline. Workers spin briefly between loops (the
// next kernel usually follows within microseconds), then sleep on a condition variable.
// One pool serves one Session (one run at a time); parallel_for is not reentrant.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "graft/backend/native_kernel.hpp"

namespace graft::cpu {

class ThreadPool {
public:
    /// `threads` is the total parallelism, the caller included (>= 1; 0 means one per core).
    explicit ThreadPool(int threads);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int size() const noexcept { return size_; }

    /// Calls fn(i) for every i in [0, n), spread over the threads; returns when all are done.
    /// fn must not throw.
    void parallel_for(std::int64_t n, const std::function<void(std::int64_t)>& fn);

    /// Number of hardware threads available to this process (>= 1).
    static int hardware_threads();

private:
    void worker(int id);
    void drain(const std::function<void(std::int64_t)>& fn, std::int64_t n);

    int size_ = 1;
    std::vector<std::thread> threads_;
    std::mutex mutex_;
    std::condition_variable wake_;
    // The current loop, published and withdrawn under mutex_; null between loops.
    const std::function<void(std::int64_t)>* fn_ = nullptr;
    std::int64_t n_ = 0;
    std::atomic<std::int64_t> next_{0};
    std::atomic<std::int64_t> done_{0};
    std::atomic<std::uint64_t> generation_{0};
    std::atomic<int> sleepers_{0};
    std::atomic<int> busy_{0};  // workers inside drain()
    bool stop_ = false;
};

/// parallel_for on `pool` when it has more than one thread, else a plain loop.
template <class F>
inline void parallel_for(ThreadPool* pool, std::int64_t n, F&& fn) {
    if (!pool || pool->size() <= 1 || n <= 1) {
        for (std::int64_t i = 0; i < n; ++i) fn(i);
        return;
    }
    const std::function<void(std::int64_t)> f = std::forward<F>(fn);
    pool->parallel_for(n, f);
}

inline int pool_size(const ThreadPool* pool) { return pool ? pool->size() : 1; }

/// Work per task for ops split with parallel_ranges, below which a hand-off to another thread
/// (about a microsecond) costs more than it saves: floats a memory-bound op streams (128 KB),
/// and floats a row op with an exp or a reduction per element handles.
constexpr std::int64_t kMinFloatsPerTask = 1 << 15;
constexpr std::int64_t kMinRowFloatsPerTask = 1 << 13;

/// Splits [0, n) into ranges, one per thread at most and each with at least `min_work` of the
/// `work` the whole takes (one range when it is small), and calls fn(begin, end) for each.
template <class F>
inline void parallel_ranges(ThreadPool* pool, std::int64_t n, std::int64_t work, std::int64_t min_work, F&& fn) {
    std::int64_t tasks = std::min<std::int64_t>(n, pool_size(pool));
    tasks = std::min<std::int64_t>(tasks, std::max<std::int64_t>(1, work / std::max<std::int64_t>(1, min_work)));
    if (tasks <= 1) {
        if (n > 0) fn(std::int64_t{0}, n);
        return;
    }
    parallel_for(pool, tasks, [&](std::int64_t t) { fn(t * n / tasks, (t + 1) * n / tasks); });
}

}  // namespace graft::cpu
