#include "thread_pool.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>

namespace edge {

namespace {

constexpr uint64_t kField = (uint64_t(1) << 20) - 1;  // chunk count and next index: 20 bits each
inline uint64_t next_of(uint64_t s) { return s & kField; }
inline uint64_t count_of(uint64_t s) { return (s >> 20) & kField; }
inline bool open(uint64_t s) { return next_of(s) < count_of(s); }

}  // namespace

int64_t ThreadPool::default_spin_ns() {
    const char* e = std::getenv("EDGE_POOL_SPIN_US");
    const long us = e ? std::strtol(e, nullptr, 10) : 100;
    return int64_t(std::clamp(us, 0L, 10000L)) * 1000;
}

ThreadPool::ThreadPool(int threads) : spin_ns_(default_spin_ns()) {
    if (threads <= 0) threads = int(std::max(1u, std::thread::hardware_concurrency()));
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard<std::mutex> lk(mu_);
        stop_ = true;
    }
    cv_start_.notify_all();
    for (auto& t : workers_) t.join();
}

void ThreadPool::run_chunks() {
    for (;;) {
        uint64_t s = state_.load(std::memory_order_acquire);
        if (!open(s)) return;
        if (!state_.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel)) continue;
        // Chunk next_of(s) of the region s was published with: that region cannot finish before
        // this chunk does, so job_, n_ and chunk_ are still its own.
        const int64_t b = int64_t(next_of(s)) * chunk_;
        (*job_)(b, std::min(n_, b + chunk_));
        if (done_chunks_.fetch_add(1) + 1 == int64_t(count_of(s)) && caller_asleep_.load()) {
            std::lock_guard<std::mutex> lk(mu_);
            cv_done_.notify_one();
        }
    }
}

void ThreadPool::worker_loop() {
    for (;;) {
        run_chunks();
        // Decode's next region usually follows within a few µs (a norm, the activation
        // quantization): wait for it with plain loads (no pause: a pause loop makes the
        // hypervisor deschedule a virtual CPU) for up to spin_ns_, then sleep.
        const int64_t spin_ns = spin_ns_.load(std::memory_order_relaxed);
        if (spin_ns > 0) {
            const auto t0 = std::chrono::steady_clock::now();
            bool fresh = false;
            for (int i = 1; !fresh; ++i) {
                fresh = open(state_.load(std::memory_order_acquire));
                if (!fresh && (i & 255) == 0 &&
                    std::chrono::steady_clock::now() - t0 > std::chrono::nanoseconds(spin_ns))
                    break;
            }
            if (fresh) continue;
        }
        std::unique_lock<std::mutex> lk(mu_);
        cv_start_.wait(lk, [&] { return stop_ || open(state_.load(std::memory_order_acquire)); });
        if (stop_) return;
    }
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn, int64_t grain) {
    if (n <= 0) return;
    const int64_t threads = size();
    grain = std::max<int64_t>(1, grain);
    const int64_t target = threads * kChunksPerThread;
    const int64_t chunk = std::max(grain, (n + target - 1) / target);
    const int64_t chunks = (n + chunk - 1) / chunk;
    if (threads == 1 || chunks <= 1) {
        fn(0, n);
        return;
    }
    job_ = &fn;
    n_ = n;
    chunk_ = chunk;
    done_chunks_.store(0, std::memory_order_relaxed);
    {
        // Published under the mutex, so a worker between its last look and its wait cannot miss it.
        std::lock_guard<std::mutex> lk(mu_);
        generation_ = (generation_ + 1) & ((uint64_t(1) << 24) - 1);
        state_.store((generation_ << 40) | (uint64_t(chunks) << 20), std::memory_order_release);
    }
    cv_start_.notify_all();
    run_chunks();
    // What is left are chunks other threads are running now.
    auto done = [&] { return done_chunks_.load(std::memory_order_acquire) == chunks; };
    // The chunks still running are short; waiting for them with plain loads beats a sleep and a
    // wake-up (10-50 us on a virtual machine) unless they run longer than spin_ns_.
    const int64_t spin_ns = spin_ns_.load(std::memory_order_relaxed);
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 1; !done(); ++i)
        if ((i & 255) == 0 && std::chrono::steady_clock::now() - t0 > std::chrono::nanoseconds(spin_ns)) break;
    if (done()) return;
    std::unique_lock<std::mutex> lk(mu_);
    caller_asleep_.store(true);  // seq_cst, before the predicate's look at done_chunks_
    cv_done_.wait(lk, done);
    caller_asleep_.store(false);
}

}  // namespace edge
