// The job mechanism: results and progress arrive on the UI thread; cancel and supersede drop the
// old job's result; engine errors become user text.
#include <gtest/gtest.h>

#include <QCoreApplication>
#include <QSignalSpy>
#include <QThread>

#include <atomic>
#include <chrono>
#include <thread>

#include "test_helpers.h"
#include "test_support.h"
#include "views/models/job.h"

using namespace edge::views;
using edge::views::test::waitUntil;

namespace {
// Spins until cancelled (or a safety timeout), reporting progress.
edge::Result<int> spinUntilCancelled(edge::Progress* p, std::atomic<bool>* returned) {
    for (int i = 0; i < 5000 && !p->cancelled(); ++i) {
        p->report(0.0001 * i, "spinning");
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    returned->store(true);
    return 7;
}
}  // namespace

TEST(JobSlot, DeliversProgressAndResultOnTheUiThread) {
    JobSlot slot;
    QThread* workerThread = nullptr;
    QThread* progressThread = nullptr;
    QThread* doneThread = nullptr;
    std::vector<double> fractions;
    QStringList stages;
    QObject::connect(&slot, &JobSlot::progress, [&](double f, const QString& stage) {
        progressThread = QThread::currentThread();
        fractions.push_back(f);
        stages << stage;
    });
    int result = 0;
    QSignalSpy finished(&slot, &JobSlot::finished);
    const quint64 gen = slot.start<int>(
        [&](edge::Progress* p) -> edge::Result<int> {
            workerThread = QThread::currentThread();
            for (int i = 1; i <= 4; ++i) {
                p->report(i / 4.0, "step " + std::to_string(i));
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
            }
            return 42;
        },
        [&](const edge::Result<int>& r) {
            doneThread = QThread::currentThread();
            ASSERT_TRUE(r.ok());
            result = r.value();
        });
    EXPECT_TRUE(slot.isRunning());
    ASSERT_TRUE(waitUntil([&] { return result != 0; }));
    EXPECT_EQ(result, 42);
    EXPECT_NE(workerThread, qApp->thread());
    EXPECT_EQ(doneThread, qApp->thread());
    ASSERT_FALSE(fractions.empty());
    EXPECT_EQ(progressThread, qApp->thread());
    EXPECT_DOUBLE_EQ(fractions.back(), 1.0);  // the latest value is never lost to coalescing
    EXPECT_EQ(stages.back(), QStringLiteral("step 4"));
    ASSERT_EQ(finished.size(), 1);
    EXPECT_EQ(finished.front().front().toULongLong(), gen);
    EXPECT_FALSE(slot.isRunning());
}

TEST(JobSlot, CancelStopsTheWorkAndDropsItsResult) {
    JobSlot slot;
    std::atomic<bool> returned{false};
    bool delivered = false;
    QSignalSpy cancelled(&slot, &JobSlot::cancelled);
    QSignalSpy running(&slot, &JobSlot::runningChanged);
    slot.start<int>([&](edge::Progress* p) { return spinUntilCancelled(p, &returned); },
                    [&](const edge::Result<int>&) { delivered = true; });
    waitUntil([] { return false; }, 50);
    slot.cancel();
    EXPECT_FALSE(slot.isRunning());
    EXPECT_EQ(cancelled.size(), 1);
    ASSERT_TRUE(waitUntil([&] { return returned.load(); }, 3000));  // the engine saw the flag
    slot.waitForWorkers();
    waitUntil([] { return false; }, 100);  // let any queued delivery run
    EXPECT_FALSE(delivered);
    ASSERT_EQ(running.size(), 2);
    EXPECT_FALSE(running.back().front().toBool());
}

TEST(JobSlot, SupersededJobsResultIsDropped) {
    JobSlot slot;
    std::atomic<bool> firstReturned{false};
    QList<int> delivered;
    const quint64 g1 = slot.start<int>(
        [&](edge::Progress*) -> edge::Result<int> {
            std::this_thread::sleep_for(std::chrono::milliseconds(150));  // ignores cancellation
            firstReturned = true;
            return 1;
        },
        [&](const edge::Result<int>& r) { delivered << r.value(); });
    const quint64 g2 = slot.start<int>([](edge::Progress*) -> edge::Result<int> { return 2; },
                                       [&](const edge::Result<int>& r) { delivered << r.value(); });
    EXPECT_GT(g2, g1);
    ASSERT_TRUE(waitUntil([&] { return firstReturned.load() && !delivered.isEmpty(); }));
    slot.waitForWorkers();
    waitUntil([] { return false; }, 100);
    EXPECT_EQ(delivered, QList<int>{2});
}

TEST(JobSlot, StaleProgressIsNotEmitted) {
    JobSlot slot;
    std::atomic<bool> returned{false};
    slot.start<int>([&](edge::Progress* p) { return spinUntilCancelled(p, &returned); },
                    [](const edge::Result<int>&) {});
    QSignalSpy progress(&slot, &JobSlot::progress);
    slot.cancel();
    waitUntil([&] { return returned.load(); }, 3000);
    slot.waitForWorkers();
    waitUntil([] { return false; }, 50);
    EXPECT_EQ(progress.size(), 0);
}

TEST(JobSlot, DestroyingTheSlotWithAJobRunningIsSafe) {
    std::atomic<bool> returned{false};
    bool delivered = false;
    {
        JobSlot slot;
        slot.start<int>([&](edge::Progress* p) { return spinUntilCancelled(p, &returned); },
                        [&](const edge::Result<int>&) { delivered = true; });
    }  // cancels and waits
    EXPECT_TRUE(returned.load());
    waitUntil([] { return false; }, 50);
    EXPECT_FALSE(delivered);
}

TEST(JobSlot, ErrorsBecomeUserText) {
    JobSlot slot;
    QString shown;
    slot.start<int>(
        [](edge::Progress*) -> edge::Result<int> { return edge::err("model.gguf: tensor count ", 9, " is absurd"); },
        [&](const edge::Result<int>& r) {
            ASSERT_TRUE(edge::test::fails_with(r, {"model.gguf", "tensor count 9 is absurd"}));
            shown = userErrorText(QStringLiteral("Could not open model.gguf."), r.error());
        });
    ASSERT_TRUE(waitUntil([&] { return !shown.isEmpty(); }));
    EXPECT_EQ(shown, QStringLiteral("Could not open model.gguf.\n\nmodel.gguf: tensor count 9 is absurd"));
    EXPECT_TRUE(userErrorText(QStringLiteral("X."), edge::Error{}).contains(QStringLiteral("did not give a reason")));
}
