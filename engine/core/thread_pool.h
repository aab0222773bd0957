// A small fixed thread pool with a blocking parallel_for, used by the CPU runtime.
//
// Work sharing: a region's range is cut into a few contiguous chunks per thread (at least `grain`
// long) that the threads claim from one atomic word, the caller included. Decode runs ~110 short
// regions per token, and a sleeping worker takes 10–50 µs to wake on a virtual machine, so with
// one fixed chunk per thread every region waited for the slowest wake-up; with claimed chunks the
// caller starts at once and a late worker simply finds less (or nothing) left to do. The caller
// waits only for chunks that are already running. Both waits — an idle worker's for the next
// region (decode's regions follow each other within a few µs) and the caller's for the running
// chunks — look at an atomic with plain loads for up to spin_us (default 100 µs, env
// EDGE_POOL_SPIN_US, 0 = off) before they sleep on a condition variable; idle pools sleep.
// docs/backends.md has the measurements behind these choices.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace edge {

class ThreadPool {
public:
    explicit ThreadPool(int threads);  // threads <= 0: hardware concurrency
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int size() const { return int(workers_.size()) + 1; }

    // Calls fn(begin, end) on disjoint contiguous chunks covering [0, n), on any of the threads
    // (the caller included), and returns when all are done. Every chunk but the last is at least
    // `grain` long; there are at most kChunksPerThread · size() of them. Not reentrant: fn must
    // not call parallel_for on the same pool.
    void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn, int64_t grain = 1);

    static constexpr int kChunksPerThread = 4;

    // How long a waiting thread looks at the atomics before it sleeps (0: sleep at once).
    void set_spin_us(int us) { spin_ns_.store(int64_t(us < 0 ? 0 : us) * 1000, std::memory_order_relaxed); }
    static int64_t default_spin_ns();  // EDGE_POOL_SPIN_US, else 100 µs

private:
    void worker_loop();
    // Claims and runs chunks of the open region until none is left.
    void run_chunks();

    std::vector<std::thread> workers_;
    std::mutex mu_;
    std::condition_variable cv_start_, cv_done_;
    // The open region, written by the caller before it publishes state_; stable while any of
    // its chunks is unfinished.
    const std::function<void(int64_t, int64_t)>* job_ = nullptr;
    int64_t n_ = 0, chunk_ = 0;
    // generation (24 bits) | chunk count (20 bits) | next unclaimed chunk (20 bits): one CAS
    // claims a chunk of exactly the region it was read from.
    std::atomic<uint64_t> state_{0};
    std::atomic<int64_t> done_chunks_{0};
    std::atomic<bool> caller_asleep_{false};
    bool stop_ = false;  // guarded by mu_
    std::atomic<int64_t> spin_ns_;
    uint64_t generation_ = 0;
};

}  // namespace edge
