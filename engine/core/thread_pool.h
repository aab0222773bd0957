// A small fixed thread pool with a blocking parallel_for, used by the CPU runtime.
//
// Hand-offs are cheap: a parallel_for publishes its job with one atomic generation counter that
// idle workers spin on (with `pause`) for a short while before they sleep on a condition
// variable, and the caller spins until the workers' chunks are done. Decode issues a few hundred
// parallel regions per token, each a few tens of microseconds long, so a condition-variable
// wake-up per region (tens of microseconds on a loaded machine) would cost a large share of the
// token; a worker that finds no work for kSpinNs sleeps, so an idle pool costs no CPU.
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

    // Calls fn(begin, end) on disjoint chunks of [0, n) using every thread (the caller included);
    // returns when all chunks are done. Chunks are contiguous and at least `grain` long.
    // Not reentrant: fn must not call parallel_for on the same pool.
    void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn, int64_t grain = 1);

    // Calls fn(thread_index, thread_count) once on every thread (the caller is index 0): one
    // parallel region in which the callee splits its own work (e.g. several matrices at once).
    void run_on_all(const std::function<void(int, int)>& fn);

    // How long an idle worker spins before it sleeps.
    static constexpr int64_t kSpinNs = 200'000;

private:
    void worker_loop(int index);
    void dispatch(const std::function<void(int)>& body);

    std::vector<std::thread> workers_;
    std::mutex mu_;
    std::condition_variable cv_start_;
    int sleepers_ = 0;                          // guarded by mu_
    bool stop_ = false;                         // guarded by mu_ (and read through stop_flag_)
    std::atomic<bool> stop_flag_{false};
    std::atomic<uint64_t> generation_{0};       // bumped (under mu_) to publish a job
    std::atomic<int> pending_{0};               // workers still running the current job
    const std::function<void(int)>* job_ = nullptr;  // written before generation_ is bumped
};

}  // namespace edge
