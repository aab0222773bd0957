#include "views/models/job.h"

#include <QCoreApplication>
#include <QPointer>
#include <QRunnable>
#include <QThread>

#include <atomic>
#include <mutex>

namespace edge::views {
namespace {

// One job's work as the runnable the pool runs on a worker thread (and deletes). Qt documents that
// QThreadPool::start hands the runnable to a pool thread: what the starting thread did before
// start happens before run(). Debian's Qt is not built with ThreadSanitizer, which cannot see that
// edge; start() states it (engine/core/tsan.h): release once the runnable is built, acquire first
// thing in run().
class JobRunnable : public QRunnable {
public:
    static void start(QThreadPool& pool, std::function<void()> work) {
        auto* runnable = new JobRunnable(std::move(work));
        edge::tsan::release(runnable);
        pool.start(runnable);  // the pool owns and deletes it (autoDelete)
    }
    void run() override {
        edge::tsan::acquire(this);
        work_();
    }

private:
    explicit JobRunnable(std::function<void()> work) : work_(std::move(work)) {}
    std::function<void()> work_;
};

}  // namespace

// What the worker and the UI thread share for one job. The worker holds it until it returns;
// the slot holds it while the job is current.
struct JobSlot::State {
    explicit State(quint64 g) : generation(g) {}
    const quint64 generation;
    std::unique_ptr<edge::Progress> progress;
    // Latest progress: the worker overwrites it; at most one queued delivery is pending, so a
    // chatty engine loop never floods the UI thread's event queue.
    std::mutex mutex;
    double fraction = 0.0;
    QString stage;
    std::atomic<bool> progressPending{false};
};

JobSlot::JobSlot(QObject* parent) : QObject(parent) { pool_.setMaxThreadCount(qMax(2, QThread::idealThreadCount())); }

JobSlot::~JobSlot() {
    if (current_) current_->progress->cancel();
    current_.reset();
    pool_.waitForDone();
}

void JobSlot::waitForWorkers() { pool_.waitForDone(); }

quint64 JobSlot::startErased(std::function<Deliver(edge::Progress*)> work) {
    if (current_) current_->progress->cancel();  // superseded: its result will be dropped
    const quint64 gen = ++generation_;
    auto state = std::make_shared<State>(gen);
    const QPointer<JobSlot> guard(this);
    const std::weak_ptr<State> weak = state;
    state->progress = std::make_unique<edge::Progress>([weak, guard](double f, const std::string& stage) {
        auto st = weak.lock();
        if (!st) return;
        {
            std::lock_guard<std::mutex> lock(st->mutex);
            st->fraction = f;
            st->stage = QString::fromStdString(stage);
        }
        if (st->progressPending.exchange(true)) return;
        postToUiThread([st, guard]() {
            st->progressPending.store(false);
            double fraction;
            QString text;
            {
                std::lock_guard<std::mutex> lock(st->mutex);
                fraction = st->fraction;
                text = st->stage;
            }
            if (guard) guard->deliverProgress(st->generation, fraction, text);
        });
    });
    current_ = state;
    JobRunnable::start(pool_, [state, guard, work = std::move(work)]() mutable {
        Deliver deliver = work(state->progress.get());
        const quint64 g = state->generation;
        postToUiThread([guard, g, deliver = std::move(deliver)]() {
            if (guard) guard->deliverResult(g, deliver);
        });
    });
    setRunning(true);
    emit started(gen);
    return gen;
}

void JobSlot::cancel() {
    if (!current_) return;
    const quint64 gen = current_->generation;
    current_->progress->cancel();
    current_.reset();
    ++generation_;  // whatever the worker still delivers is stale now
    setRunning(false);
    emit cancelled(gen);
}

void JobSlot::deliverProgress(quint64 generation, double fraction, const QString& stage) {
    if (generation != generation_ || !running_) return;
    emit progress(fraction, stage);
}

void JobSlot::deliverResult(quint64 generation, const Deliver& deliver) {
    if (generation != generation_ || !current_) return;  // superseded or cancelled: dropped
    current_.reset();
    setRunning(false);
    deliver();
    emit finished(generation);
}

void JobSlot::setRunning(bool running) {
    if (running_ == running) return;
    running_ = running;
    emit runningChanged(running);
}

QString userErrorText(const QString& action, const edge::Error& error) {
    QString detail = QString::fromStdString(error.message).trimmed();
    if (detail.isEmpty()) detail = JobSlot::tr("The engine did not give a reason.");
    return action + QStringLiteral("\n\n") + detail;
}

}  // namespace edge::views
