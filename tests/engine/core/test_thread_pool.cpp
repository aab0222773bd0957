// engine/core/thread_pool: every index covered exactly once, for any size, grain and thread count;
// many back-to-back regions; regions after the workers have been idle a while; own pieces in order,
// slow runs taken from the back.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/core/thread_pool.h"

using namespace edge;

TEST(ThreadPool, ParallelForCoversEveryIndexOnce) {
    for (int threads : {1, 2, 3, 4}) {
        ThreadPool pool(threads);
        EXPECT_EQ(pool.size(), threads);
        for (int64_t n : {0, 1, 2, 3, 7, 1000, 4097})
            for (int64_t grain : {1, 5, 2000}) {
                std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
                std::atomic<int> calls{0};
                pool.parallel_for(
                    n,
                    [&](int64_t b, int64_t e) {
                        EXPECT_LT(b, e);
                        EXPECT_TRUE(e - b >= grain || e == n)
                            << "chunk " << b << ".." << e << " shorter than grain " << grain;
                        ++calls;
                        for (int64_t i = b; i < e; ++i) ++hits[size_t(i)];
                    },
                    grain);
                for (int64_t i = 0; i < n; ++i)
                    ASSERT_EQ(hits[size_t(i)].load(), 1) << "index " << i << " n " << n << " threads " << threads;
                EXPECT_LE(calls.load(), threads * ThreadPool::kPiecesPerThread);
            }
    }
}

// Decode's pattern: thousands of short regions back to back; each sees the previous one's writes.
TEST(ThreadPool, ManyShortRegionsInARow) {
    ThreadPool pool(2);
    std::vector<int64_t> v(64, 0);
    for (int round = 0; round < 20000; ++round)
        pool.parallel_for(int64_t(v.size()), [&](int64_t b, int64_t e) {
            for (int64_t i = b; i < e; ++i) v[size_t(i)] += 1;
        });
    for (int64_t x : v) EXPECT_EQ(x, 20000);
}

// Workers idle for a while must be woken by the next region (no lost wake-up), and the pool must
// shut down cleanly with sleeping workers.
TEST(ThreadPool, WakesWorkersThatWentToSleep) {
    for (int rep = 0; rep < 5; ++rep) {
        ThreadPool pool(3);
        std::atomic<int64_t> sum{0};
        for (int round = 0; round < 3; ++round) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
            pool.parallel_for(3, [&](int64_t b, int64_t e) {
                for (int64_t i = b; i < e; ++i) sum += i + 1;
            });
        }
        EXPECT_EQ(sum.load(), 3 * (1 + 2 + 3));
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

// Pieces are claimed, not assigned: while the caller runs one slow piece, a worker takes its own,
// so a region of slow pieces runs on more than one thread; and every piece runs once.
TEST(ThreadPool, WorkersClaimPiecesTheCallerHasNotTaken) {
    ThreadPool pool(2);
    std::mutex mu;
    std::vector<std::thread::id> ran_on;
    std::atomic<int64_t> covered{0};
    pool.parallel_for(8, [&](int64_t b, int64_t e) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        covered += e - b;
        std::lock_guard<std::mutex> lk(mu);
        ran_on.push_back(std::this_thread::get_id());
    });
    EXPECT_EQ(covered.load(), 8);
    EXPECT_EQ(ran_on.size(), 8u);  // 8 pieces of one index
    std::sort(ran_on.begin(), ran_on.end());
    EXPECT_GE(std::unique(ran_on.begin(), ran_on.end()) - ran_on.begin(), 2) << "only the caller ran pieces";
}

// Each thread walks its own run in address order, each piece starting where its previous one
// ended (the kernels' prefetch runs on into the next piece); a thread whose pieces are slow loses
// the back of its run to the others.
TEST(ThreadPool, OwnPiecesInOrderAndSlowRunsAreTakenFromTheBack) {
    ThreadPool pool(2);
    const int64_t n = 2 * ThreadPool::kPiecesPerThread * 10;  // pieces of 10
    std::mutex mu;
    std::vector<std::pair<std::thread::id, int64_t>> order;
    const std::thread::id caller = std::this_thread::get_id();
    std::atomic<bool> worker_started{false};
    pool.parallel_for(n, [&](int64_t b, int64_t e) {
        EXPECT_EQ(e - b, 10);
        {
            std::lock_guard<std::mutex> lk(mu);
            order.push_back({std::this_thread::get_id(), b});
        }
        if (std::this_thread::get_id() != caller) {
            // The worker's pieces are slow: the caller must take some of them.
            worker_started = true;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        } else if (b == 0) {
            // Let the worker begin its run before the caller can take all of it.
            const auto t0 = std::chrono::steady_clock::now();
            while (!worker_started && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5))
                std::this_thread::sleep_for(std::chrono::microseconds(100));
        }
    });
    ASSERT_TRUE(worker_started.load()) << "the worker never ran";
    ASSERT_EQ(order.size(), size_t(2 * ThreadPool::kPiecesPerThread));
    const int64_t half = n / 2;
    std::vector<int64_t> caller_own, worker_own, caller_stolen, worker_stolen;
    for (const auto& [id, b] : order) {
        if (id == caller)
            (b < half ? caller_own : caller_stolen).push_back(b);
        else
            (b < half ? worker_stolen : worker_own).push_back(b);
    }
    // The caller's run: from its front by the caller, in order; a slow caller (a sanitizer build,
    // a descheduled vCPU) may see the worker take pieces of it from the back, never the front.
    ASSERT_EQ(caller_own.size() + worker_stolen.size(), size_t(ThreadPool::kPiecesPerThread));
    ASSERT_FALSE(caller_own.empty());
    for (size_t i = 0; i < caller_own.size(); ++i)
        EXPECT_EQ(caller_own[i], int64_t(i) * 10) << "caller's own run out of order";
    for (size_t i = 0; i < worker_stolen.size(); ++i)
        EXPECT_EQ(worker_stolen[i], half - 10 * int64_t(i + 1)) << "the worker did not take the caller's back";
    for (size_t i = 0; i < worker_own.size(); ++i)
        EXPECT_EQ(worker_own[i], half + int64_t(i) * 10) << "worker's run out of order";
    ASSERT_FALSE(worker_own.empty());
    ASSERT_FALSE(caller_stolen.empty()) << "the caller never took a piece of the slow worker's run";
    for (size_t i = 0; i < caller_stolen.size(); ++i)
        EXPECT_EQ(caller_stolen[i], n - 10 * int64_t(i + 1)) << "not taken from the back";
}

// Workers that sleep at once, spin briefly, or spin longer than the gaps between regions all
// see every region (no lost wake-up on either path) and shut down cleanly.
TEST(ThreadPool, SpinningAndSleepingWorkersSeeEveryRegion) {
    for (int spin_us : {0, 30, 2000}) {
        ThreadPool pool(3);
        pool.set_spin_us(spin_us);
        std::atomic<int64_t> sum{0};
        for (int round = 0; round < 200; ++round) {
            if (round % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(3));
            pool.parallel_for(30, [&](int64_t b, int64_t e) {
                for (int64_t i = b; i < e; ++i) sum += i;
            });
        }
        EXPECT_EQ(sum.load(), 200 * (29 * 30 / 2)) << "spin " << spin_us << " us";
    }
}
