// The one job mechanism of the studio (QtCore only): engine work that takes an edge::Progress*
// runs on a worker thread; progress and the result come back to the UI thread through queued
// calls guarded by a QPointer; each JobSlot carries a generation number, so when a newer job
// starts (or the job is cancelled) the superseded job's result is dropped, never shown.
//
//   slot.start<edge::Model>(
//       [path](edge::Progress* p) { return edge::load_model(path, {}, p); },
//       [this](edge::Result<edge::Model> r) { ... runs on the UI thread, only if current ... });
#pragma once
#include <QCoreApplication>
#include <QObject>
#include <QString>
#include <QThreadPool>

#include <functional>
#include <memory>
#include <utility>

#include "engine/core/progress.h"
#include "engine/core/result.h"
#include "engine/core/tsan.h"

namespace edge::views {

namespace detail {

// A call queued to the UI thread. Qt documents that a queued call runs in the receiver's thread
// after it was posted: what the posting thread did before posting happens before the call. Debian's
// Qt is not built with ThreadSanitizer, which cannot see that edge inside the event queue; this
// wrapper states it (engine/core/tsan.h) on its own address: release when Qt moves it into the slot
// object it queues (the last write before posting), acquire before it runs or is destroyed there.
template <class Fn>
class QueuedCall {
public:
    explicit QueuedCall(Fn fn) : fn_(std::make_unique<Fn>(std::move(fn))) {}
    QueuedCall(QueuedCall&& other) noexcept : fn_(std::move(other.fn_)) { edge::tsan::release(this); }
    QueuedCall(const QueuedCall&) = delete;
    QueuedCall& operator=(const QueuedCall&) = delete;
    QueuedCall& operator=(QueuedCall&&) = delete;
    ~QueuedCall() {
        if (fn_) edge::tsan::acquire(this);  // also when dropped undelivered (the application quit)
    }
    void operator()() {
        edge::tsan::acquire(this);
        (*fn_)();
    }

private:
    std::unique_ptr<Fn> fn_;  // on the heap, so that moving the call never throws
};

}  // namespace detail

// Runs `fn()` later on the UI thread (the application's) through a queued call; dropped when
// there is no application. Every hand-off from a worker to the UI thread goes through here.
template <class Fn>
void postToUiThread(Fn fn) {
    QCoreApplication* app = QCoreApplication::instance();
    if (!app) return;
    QMetaObject::invokeMethod(app, detail::QueuedCall<Fn>(std::move(fn)), Qt::QueuedConnection);
}

class JobSlot : public QObject {
    Q_OBJECT
public:
    explicit JobSlot(QObject* parent = nullptr);
    // Cancels the running job and waits for the worker to return.
    ~JobSlot() override;

    // Starts `work(progress)` on a worker thread, superseding any running job of this slot.
    // `done(result)` runs later on the UI thread unless the job was superseded or cancelled.
    // Returns the new job's generation.
    template <class T, class Work, class Done>
    quint64 start(Work work, Done done) {
        return startErased([work = std::move(work),
                            done = std::move(done)](edge::Progress* progress) mutable -> std::function<void()> {
            auto result = std::make_shared<edge::Result<T>>(work(progress));
            return [result, done]() mutable { done(std::move(*result)); };
        });
    }

    // Cancels the running job (its result will be dropped). No-op when idle.
    void cancel();
    bool isRunning() const { return running_; }
    quint64 generation() const { return generation_; }
    // Waits (processing no events) until every worker of this slot has returned; for tests.
    void waitForWorkers();

signals:
    void started(quint64 generation);
    // fraction in [0,1]; the stage as the engine names it (may be empty).
    void progress(double fraction, const QString& stage);
    void finished(quint64 generation);
    void cancelled(quint64 generation);
    void runningChanged(bool running);

private:
    struct State;
    using Deliver = std::function<void()>;
    quint64 startErased(std::function<Deliver(edge::Progress*)> work);
    void deliverProgress(quint64 generation, double fraction, const QString& stage);
    void deliverResult(quint64 generation, const Deliver& deliver);
    void setRunning(bool running);

    QThreadPool pool_;
    std::shared_ptr<State> current_;
    quint64 generation_ = 0;
    bool running_ = false;
};

// The text a user reads when engine work fails: what was attempted, then the engine's message.
QString userErrorText(const QString& action, const edge::Error& error);

}  // namespace edge::views
