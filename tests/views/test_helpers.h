// Shared by the views tests: a small hand-built Llama model, the real model the tests load, and
// waiting on the event loop.
#pragma once
#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QString>

#include <functional>

#include "engine/model/ir.h"

namespace edge::views::test {

// A Llama model built in memory: `blocks` decoder blocks of width `dim` (graph finalized).
edge::model::Model tinyModel(int blocks = 2, int dim = 8, const std::string& name = "tiny");
// The real model the tests open: the generated demo model when the build makes one, else
// ../shared/models/stories260K/stories260K.gguf.
QString realModelPath();
QString stories260kPath();
// Processes events until `done()` or the timeout; returns done().
bool waitUntil(const std::function<bool()>& done, int timeoutMs = 20000);

}  // namespace edge::views::test
