#include "thread_pool.h"

#include <algorithm>
#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace edge {

namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#endif
}

using Clock = std::chrono::steady_clock;

}  // namespace

ThreadPool::ThreadPool(int threads) {
    if (threads <= 0) threads = int(std::max(1u, std::thread::hardware_concurrency()));
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard<std::mutex> lk(mu_);
        stop_ = true;
        stop_flag_.store(true, std::memory_order_release);
    }
    cv_start_.notify_all();
    for (auto& t : workers_) t.join();
}

void ThreadPool::worker_loop(int index) {
    uint64_t seen = 0;
    for (;;) {
        uint64_t g = generation_.load(std::memory_order_acquire);
        if (g == seen) {
            // Spin a while (the next region usually follows within microseconds), then sleep.
            const auto until = Clock::now() + std::chrono::nanoseconds(kSpinNs);
            int n = 0;
            while ((g = generation_.load(std::memory_order_acquire)) == seen) {
                if (stop_flag_.load(std::memory_order_acquire)) return;
                cpu_relax();
                if ((++n & 63) == 0 && Clock::now() > until) {
                    std::unique_lock<std::mutex> lk(mu_);
                    ++sleepers_;
                    cv_start_.wait(lk, [&] { return stop_ || generation_.load(std::memory_order_acquire) != seen; });
                    --sleepers_;
                    if (stop_) return;
                }
            }
        }
        seen = g;
        (*job_)(index);
        pending_.fetch_sub(1, std::memory_order_acq_rel);
    }
}

void ThreadPool::dispatch(const std::function<void(int)>& body) {
    job_ = &body;
    pending_.store(int(workers_.size()), std::memory_order_relaxed);
    bool wake;
    {
        // Bumped under the mutex so that a worker about to sleep cannot miss it.
        std::lock_guard<std::mutex> lk(mu_);
        generation_.fetch_add(1, std::memory_order_acq_rel);
        wake = sleepers_ > 0;
    }
    if (wake) cv_start_.notify_all();
    body(0);
    int n = 0;
    while (pending_.load(std::memory_order_acquire) != 0) {
        cpu_relax();
        // A worker that lost its core (a loaded machine) gets it back sooner if we yield.
        if ((++n & 1023) == 0) std::this_thread::yield();
    }
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn, int64_t grain) {
    if (n <= 0) return;
    const int64_t threads = size();
    if (threads == 1 || n <= grain) {
        fn(0, n);
        return;
    }
    int64_t chunk = (n + threads - 1) / threads;
    chunk = std::max(chunk, grain);
    const std::function<void(int)> body = [&](int index) {
        const int64_t b = std::min<int64_t>(n, int64_t(index) * chunk);
        const int64_t e = std::min<int64_t>(n, b + chunk);
        if (b < e) fn(b, e);
    };
    dispatch(body);
}

void ThreadPool::run_on_all(const std::function<void(int, int)>& fn) {
    const int threads = size();
    if (threads == 1) {
        fn(0, 1);
        return;
    }
    const std::function<void(int)> body = [&](int index) { fn(index, threads); };
    dispatch(body);
}

}  // namespace edge
