// A small fixed thread pool with a blocking parallel_for, used by the CPU runtime.
#pragma once
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
    void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn, int64_t grain = 1);

private:
    void worker_loop(int index);

    std::vector<std::thread> workers_;
    std::mutex mu_;
    std::condition_variable cv_start_, cv_done_;
    const std::function<void(int64_t, int64_t)>* job_ = nullptr;
    int64_t n_ = 0;
    int64_t chunk_ = 0;
    uint64_t generation_ = 0;
    int pending_ = 0;
    bool stop_ = false;
};

}  // namespace edge
