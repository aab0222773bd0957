#include "thread_pool.h"

#include <algorithm>

namespace edge {

ThreadPool::ThreadPool(int threads) {
    if (threads <= 0) threads = int(std::max(1u, std::thread::hardware_concurrency()));
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard<std::mutex> lk(mu_);
        stop_ = true;
    }
    cv_start_.notify_all();
    for (auto& t : workers_) t.join();
}

void ThreadPool::worker_loop(int index) {
    uint64_t seen = 0;
    for (;;) {
        const std::function<void(int64_t, int64_t)>* job;
        int64_t n, chunk;
        {
            std::unique_lock<std::mutex> lk(mu_);
            cv_start_.wait(lk, [&] { return stop_ || generation_ != seen; });
            if (stop_) return;
            seen = generation_;
            job = job_;
            n = n_;
            chunk = chunk_;
        }
        const int64_t b = std::min<int64_t>(n, int64_t(index) * chunk);
        const int64_t e = std::min<int64_t>(n, b + chunk);
        if (b < e) (*job)(b, e);
        {
            std::lock_guard<std::mutex> lk(mu_);
            if (--pending_ == 0) cv_done_.notify_one();
        }
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
    {
        std::lock_guard<std::mutex> lk(mu_);
        job_ = &fn;
        n_ = n;
        chunk_ = chunk;
        pending_ = int(workers_.size());
        ++generation_;
    }
    cv_start_.notify_all();
    fn(0, std::min(n, chunk));
    std::unique_lock<std::mutex> lk(mu_);
    cv_done_.wait(lk, [&] { return pending_ == 0; });
}

}  // namespace edge
