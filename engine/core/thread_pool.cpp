#include "thread_pool.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>

namespace edge {

namespace {

inline uint64_t pack(int64_t front, int64_t end) { return (uint64_t(front) << 32) | uint64_t(end); }
inline int64_t front_of(uint64_t w) { return int64_t(w >> 32); }
inline int64_t end_of(uint64_t w) { return int64_t(w & 0xffffffffu); }

}  // namespace

int64_t ThreadPool::default_spin_ns() {
    const char* e = std::getenv("EDGE_POOL_SPIN_US");
    const long us = e ? std::strtol(e, nullptr, 10) : 100;
    return int64_t(std::clamp(us, 0L, 10000L)) * 1000;
}

ThreadPool::ThreadPool(int threads) : spin_ns_(default_spin_ns()) {
    if (threads <= 0) threads = int(std::max(1u, std::thread::hardware_concurrency()));
    runs_ = std::make_unique<Run[]>(size_t(threads));
    size_ = threads;
    workers_.reserve(size_t(threads - 1));
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

bool ThreadPool::has_work() const {
    for (int r = 0; r < size(); ++r) {
        const uint64_t w = runs_[size_t(r)].word.load(std::memory_order_acquire);
        if (front_of(w) < end_of(w)) return true;
    }
    return false;
}

int64_t ThreadPool::claim(int r, bool front) {
    std::atomic<uint64_t>& word = runs_[size_t(r)].word;
    uint64_t w = word.load(std::memory_order_acquire);
    for (;;) {
        const int64_t f = front_of(w), e = end_of(w);
        if (f >= e) return -1;
        if (word.compare_exchange_weak(w, front ? pack(f + 1, e) : pack(f, e - 1), std::memory_order_acq_rel,
                                       std::memory_order_acquire))
            return front ? f : e - 1;
    }
}

void ThreadPool::run_piece(int64_t p) {
    // Read after the claim: the region of this piece (see job_).
    const int64_t b = p * piece_, total = pieces_;
    (*job_)(b, std::min(n_, b + piece_));
    // `total` is read before the increment: once the last increment is seen, the caller may write
    // the next region's fields (reading pieces_ after it was a data race, found by TSan).
    if (done_pieces_.fetch_add(1, std::memory_order_acq_rel) + 1 == total && caller_asleep_.load()) {
        std::lock_guard<std::mutex> lk(mu_);
        cv_done_.notify_one();
    }
}

void ThreadPool::run_pieces(int self) {
    for (int64_t p; (p = claim(self, true)) >= 0;) run_piece(p);
    for (int k = 1; k < size(); ++k)
        for (int64_t p; (p = claim((self + k) % size(), false)) >= 0;) run_piece(p);
}

void ThreadPool::worker_loop(int self) {
    for (;;) {
        run_pieces(self);
        // Decode's next region usually follows within a few µs (a norm, the activation
        // quantization): wait for it with plain loads (no pause: a pause loop makes the
        // hypervisor deschedule a virtual CPU) for up to spin_ns_, then sleep.
        const int64_t spin_ns = spin_ns_.load(std::memory_order_relaxed);
        if (spin_ns > 0) {
            const auto t0 = std::chrono::steady_clock::now();
            bool fresh = false;
            for (int i = 1; !fresh; ++i) {
                fresh = has_work();
                if (!fresh && (i & 255) == 0 &&
                    std::chrono::steady_clock::now() - t0 > std::chrono::nanoseconds(spin_ns))
                    break;
            }
            if (fresh) continue;
        }
        std::unique_lock<std::mutex> lk(mu_);
        cv_start_.wait(lk, [&] { return stop_ || has_work(); });
        if (stop_) return;
    }
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn, int64_t grain) {
    if (n <= 0) return;
    const int64_t threads = size();
    grain = std::max<int64_t>(1, grain);
    const int64_t target = threads * kPiecesPerThread;
    const int64_t piece = std::max(grain, (n + target - 1) / target);
    const int64_t pieces = (n + piece - 1) / piece;
    if (threads == 1 || pieces <= 1) {
        fn(0, n);
        return;
    }
    job_ = &fn;
    n_ = n;
    piece_ = piece;
    pieces_ = pieces;
    done_pieces_.store(0, std::memory_order_relaxed);
    {
        // Published under the mutex, so a worker between its last look and its wait cannot miss it.
        // From the last run to the caller's: a worker spinning on plain loads starts as soon as it
        // sees any run, so it must not see the caller's before its own. Under TSan a worker that
        // started on the caller's run (from the back) lost all of its own to the caller meanwhile
        // (ThreadPool.OwnPiecesInOrderAndSlowRunsAreTakenFromTheBack, 1 run in ~12). With more
        // than two threads a worker may still take a piece of a later run first.
        std::lock_guard<std::mutex> lk(mu_);
        for (int64_t t = threads - 1; t >= 0; --t)
            runs_[size_t(t)].word.store(pack(pieces * t / threads, pieces * (t + 1) / threads),
                                        std::memory_order_release);
    }
    cv_start_.notify_all();
    run_pieces(0);
    // What is left are pieces other threads are running now.
    auto done = [&] { return done_pieces_.load(std::memory_order_acquire) == pieces; };
    // The pieces still running are short; waiting for them with plain loads beats a sleep and a
    // wake-up (10-50 us on a virtual machine) unless they run longer than spin_ns_.
    const int64_t spin_ns = spin_ns_.load(std::memory_order_relaxed);
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 1; !done(); ++i)
        if ((i & 255) == 0 && std::chrono::steady_clock::now() - t0 > std::chrono::nanoseconds(spin_ns)) break;
    if (done()) return;
    std::unique_lock<std::mutex> lk(mu_);
    caller_asleep_.store(true);  // seq_cst, before the predicate's look at done_pieces_
    cv_done_.wait(lk, done);
    caller_asleep_.store(false);
}

}  // namespace edge
