// A small fixed thread pool with a blocking parallel_for, used by the CPU runtime.
//
// Work sharing: a region's range is cut into pieces (kPiecesPerThread per thread, each at least
// `grain` long), and each thread owns a contiguous run of them: thread t the t-th run, the caller
// being thread 0. A thread takes its own pieces from the front, in address order, and when its
// run is empty takes pieces from the back of the others' runs. So each thread streams through
// one contiguous stretch of a weight matrix, and the matmul kernels' software prefetch (which runs
// ahead past the end of a call) carries on from one piece into the next; a region is cold only at
// its two starts, not at every chunk. The end of a region waits for at most one piece (an 8th of a
// thread's share) instead of a quarter of a share; a worker that wakes late, or runs slower,
// simply loses pieces from the back of its run to the others. Decode runs ~110 short regions per
// token. Both waits — an idle worker's for the next region (decode's regions follow each other
// within a few µs) and the caller's for pieces still running — look at atomics with plain loads
// for up to spin_us (default 100 µs, env EDGE_POOL_SPIN_US, 0 = off) before they sleep on a
// condition variable; idle pools sleep. docs/backends.md has the measurements behind these
// choices.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
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

    int size() const { return size_; }

    // Calls fn(begin, end) on disjoint contiguous pieces covering [0, n), on any of the threads
    // (the caller included), and returns when all are done. Every piece but the last is at least
    // `grain` long; there are at most kPiecesPerThread · size() of them. Not reentrant: fn must
    // not call parallel_for on the same pool.
    void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn, int64_t grain = 1);

    static constexpr int kPiecesPerThread = 8;

    // How long a waiting thread looks at the atomics before it sleeps (0: sleep at once).
    void set_spin_us(int us) { spin_ns_.store(int64_t(us < 0 ? 0 : us) * 1000, std::memory_order_relaxed); }
    static int64_t default_spin_ns();  // EDGE_POOL_SPIN_US, else 100 µs

private:
    // One thread's run of pieces: (first unclaimed piece << 32) | end. The owner claims from the
    // front, the others from the back, each with one compare-and-swap; own cache line each.
    struct alignas(64) Run {
        std::atomic<uint64_t> word{0};
    };

    void worker_loop(int self);
    // Runs own pieces from the front, then the others' from the back, until none is left.
    void run_pieces(int self);
    // A piece of run r (from its front or back), or −1 when the run is empty.
    int64_t claim(int r, bool front);
    void run_piece(int64_t p);
    bool has_work() const;

    // Fixed before the first worker starts: workers read it while the constructor is still
    // adding threads to workers_ (reading workers_.size() there was a data race, found by TSan).
    int size_ = 1;
    std::vector<std::thread> workers_;
    std::unique_ptr<Run[]> runs_;
    std::mutex mu_;
    std::condition_variable cv_start_, cv_done_;
    // The open region, written by the caller before it publishes the runs and read by a thread
    // only after it has claimed a piece: the region cannot finish before that piece does, so they
    // are still its own (a worker that looked at an older region can only claim this one's pieces).
    const std::function<void(int64_t, int64_t)>* job_ = nullptr;
    int64_t n_ = 0, piece_ = 0, pieces_ = 0;
    std::atomic<int64_t> done_pieces_{0};
    std::atomic<bool> caller_asleep_{false};
    bool stop_ = false;  // guarded by mu_
    std::atomic<int64_t> spin_ns_;
};

}  // namespace edge
