// Shared by the views tests: a small hand-built Llama model, the real model the tests load, and
// waiting on the event loop.
#pragma once
#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QString>

#include <functional>
#include <initializer_list>

#include <gtest/gtest.h>

#include "engine/model/ir.h"
#include "views/models/result.h"

namespace edge::views::test {

// A Llama model built in memory: `blocks` decoder blocks of width `dim` (graph finalized).
edge::model::Model tinyModel(int blocks = 2, int dim = 8, const std::string& name = "tiny");
// The real model the tests open: the generated demo model when the build makes one, else
// ../shared/models/stories260K/stories260K.gguf.
QString realModelPath();
QString stories260kPath();
// Processes events until `done()` or the timeout; returns done().
bool waitUntil(const std::function<bool()>& done, int timeoutMs = 20000);

// A views::Result as a gtest assertion: success, or a failure that shows the message.
inline ::testing::AssertionResult succeeded(const Result& r) {
    if (r.ok()) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << r.message().toStdString();
}
// The views' counterpart of edge::test::fails_with: r failed and its message mentions every part.
inline ::testing::AssertionResult failsWith(const Result& r, std::initializer_list<QString> parts) {
    if (r.ok()) return ::testing::AssertionFailure() << "succeeded; expected an error naming the given parts";
    for (const QString& p : parts)
        if (!r.message().contains(p))
            return ::testing::AssertionFailure()
                   << "error does not mention '" << p.toStdString() << "': " << r.message().toStdString();
    return ::testing::AssertionSuccess() << r.message().toStdString();
}

}  // namespace edge::views::test
