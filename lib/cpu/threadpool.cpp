#include "cpu/threadpool.hpp"

#include <chrono>

#if defined(__linux__)
#include <sched.h>
#endif

namespace graft::cpu {

namespace {
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}
constexpr auto kSpin = std::chrono::microseconds(2000);  // how long an idle worker spins before sleeping
}  // namespace

int ThreadPool::hardware_threads() {
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
    return 1;  // the browser runtime built without threads
#endif
#if defined(__linux__)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        const int n = CPU_COUNT(&set);
        if (n >= 1) return n;
    }
#endif
    const unsigned n = std::thread::hardware_concurrency();
    return n >= 1 ? static_cast<int>(n) : 1;
}

ThreadPool::ThreadPool(int threads) {
    size_ = threads <= 0 ? hardware_threads() : threads;
    if (size_ > 256) size_ = 256;
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
    size_ = 1;  // no threads to start: everything runs on the calling thread
#endif
    threads_.reserve(static_cast<std::size_t>(size_ - 1));
    for (int i = 1; i < size_; ++i) threads_.emplace_back([this, i] { worker(i); });
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
        generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
}

void ThreadPool::drain(const std::function<void(std::int64_t)>& fn, std::int64_t n) {
    for (;;) {
        const std::int64_t i = next_.fetch_add(1, std::memory_order_relaxed);
        if (i >= n) break;
        fn(i);
        done_.fetch_add(1, std::memory_order_acq_rel);
    }
}

void ThreadPool::parallel_for(std::int64_t n, const std::function<void(std::int64_t)>& fn) {
    if (n <= 0) return;
    {
        // fn_ and n_ are read and written only under the lock (workers take a copy).
        std::lock_guard<std::mutex> lock(mutex_);
        fn_ = &fn;
        n_ = n;
        next_.store(0, std::memory_order_relaxed);
        done_.store(0, std::memory_order_relaxed);
        generation_.fetch_add(1, std::memory_order_release);
    }
    if (sleepers_.load(std::memory_order_acquire) > 0) wake_.notify_all();
    drain(fn, n);
    while (done_.load(std::memory_order_acquire) < n) cpu_relax();
    {
        // Withdraw the loop: a worker that wakes from now on finds no work. One that copied fn_
        // before this counted itself busy under the lock, so the wait below sees it.
        std::lock_guard<std::mutex> lock(mutex_);
        fn_ = nullptr;
        n_ = 0;
    }
    // No worker may still be inside drain() when fn goes out of scope or next_ is reset by the
    // next loop (a late worker finds next_ >= n and leaves without calling fn).
    while (busy_.load(std::memory_order_acquire) > 0) cpu_relax();
}

void ThreadPool::worker(int) {
    std::uint64_t seen = 0;
    for (;;) {
        // Spin for new work, then sleep.
        auto start = std::chrono::steady_clock::now();
        std::uint64_t g = generation_.load(std::memory_order_acquire);
        int spins = 0;
        while (g == seen) {
            cpu_relax();
            if (++spins == 256) {
                spins = 0;
                if (std::chrono::steady_clock::now() - start > kSpin) {
                    std::unique_lock<std::mutex> lock(mutex_);
                    sleepers_.fetch_add(1, std::memory_order_acq_rel);
                    wake_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
                    sleepers_.fetch_sub(1, std::memory_order_acq_rel);
                    start = std::chrono::steady_clock::now();
                }
            }
            g = generation_.load(std::memory_order_acquire);
        }
        const std::function<void(std::int64_t)>* fn = nullptr;
        std::int64_t n = 0;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (stop_) return;
            seen = generation_.load(std::memory_order_relaxed);
            fn = fn_, n = n_;
            if (fn) busy_.fetch_add(1, std::memory_order_acq_rel);
        }
        if (!fn) continue;  // the loop was over before this worker got to it
        drain(*fn, n);
        busy_.fetch_sub(1, std::memory_order_acq_rel);
    }
}

}  // namespace graft::cpu
