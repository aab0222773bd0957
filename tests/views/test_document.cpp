// The model document: loads through the engine off the UI thread, keeps the previous model when a
// load fails or is cancelled.
#include <gtest/gtest.h>

#include <QFile>
#include <QSignalSpy>

#include <chrono>
#include <thread>

#include "engine/model/gguf.h"
#include "engine/model/synth.h"
#include "engine/model/weights.h"
#include "test_helpers.h"
#include "test_support.h"
#include "views/models/model_document.h"

using namespace edge::views;
using edge::views::test::waitUntil;

namespace {
QString writeFile(const QString& name, const QByteArray& bytes) {
    QString path = QString::fromStdString((edge::test::temp_dir("views-doc") / name.toStdString()).string());
    QFile f(path);
    EXPECT_TRUE(f.open(QIODevice::WriteOnly));
    f.write(bytes);
    return path;
}
}  // namespace

TEST(ModelDocument, LoadsTheRealModel) {
    const QString path = edge::views::test::realModelPath();
    EDGE_REQUIRE_SHARED(path.toStdString());
    ModelDocument doc;
    QSignalSpy changed(&doc, &ModelDocument::modelChanged);
    QSignalSpy loading(&doc, &ModelDocument::loadingChanged);
    QSignalSpy failed(&doc, &ModelDocument::loadFailed);
    doc.open(path);
    EXPECT_TRUE(doc.isLoading());
    EXPECT_EQ(doc.loadingPath(), path);
    ASSERT_TRUE(waitUntil([&] { return changed.size() == 1 || failed.size() == 1; }));
    ASSERT_EQ(failed.size(), 0) << failed.front().at(1).toString().toStdString();
    ASSERT_TRUE(doc.current());
    EXPECT_EQ(doc.path(), path);
    EXPECT_FALSE(doc.isLoading());
    EXPECT_GT(doc.current()->model.parameter_count(), 0);
    EXPECT_EQ(int(doc.current()->layers.size()), doc.current()->model.config.n_layers * 7 + 1);
    EXPECT_EQ(loading.size(), 2);
}

TEST(ModelDocument, CorruptFileShowsTheEngineMessageAndKeepsThePreviousModel) {
    ModelDocument doc;
    doc.setModel(edge::views::test::tinyModel(2, 8, "previous"), QStringLiteral("/models/previous.gguf"));
    const auto before = doc.current();
    QByteArray bytes("GGUF");
    bytes.append(QByteArray::fromHex("03000000"));  // version 3, then the file ends
    bytes.append(QByteArray(5, '\xff'));
    const QString corrupt = writeFile(QStringLiteral("corrupt.gguf"), bytes);
    QSignalSpy failed(&doc, &ModelDocument::loadFailed);
    QSignalSpy changed(&doc, &ModelDocument::modelChanged);
    doc.open(corrupt);
    ASSERT_TRUE(waitUntil([&] { return failed.size() == 1; }));
    const QString message = failed.front().at(1).toString();
    EXPECT_TRUE(message.contains(QStringLiteral("corrupt.gguf"))) << message.toStdString();
    EXPECT_GT(message.size(), QStringLiteral("Could not open “corrupt.gguf”.").size() + 4) << message.toStdString();
    EXPECT_EQ(failed.front().at(0).toString(), corrupt);
    EXPECT_EQ(changed.size(), 0);
    EXPECT_EQ(doc.current(), before);
    EXPECT_EQ(doc.path(), QStringLiteral("/models/previous.gguf"));
    EXPECT_FALSE(doc.isLoading());
}

TEST(ModelDocument, MissingFileFailsWithItsName) {
    ModelDocument doc;
    QSignalSpy failed(&doc, &ModelDocument::loadFailed);
    doc.open(QStringLiteral("/nonexistent/folder/model.gguf"));
    ASSERT_TRUE(waitUntil([&] { return failed.size() == 1; }));
    EXPECT_TRUE(failed.front().at(1).toString().contains(QStringLiteral("model.gguf")));
    EXPECT_EQ(doc.current(), nullptr);
}

TEST(ModelDocument, CancelKeepsThePreviousModel) {
    // A loader that runs until cancelled, standing in for a large file.
    ModelDocument doc(
        nullptr,
        [](const std::string&, const edge::model::LoadOptions&, edge::Progress* p) -> edge::Result<edge::model::Model> {
            for (int i = 0; i < 5000 && !p->cancelled(); ++i) {
                p->report(0.5, "reading tensors");
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
            return edge::views::test::tinyModel(1, 8, "late");
        });
    doc.setModel(edge::views::test::tinyModel(2, 8, "previous"), QStringLiteral("/models/previous.gguf"));
    const auto before = doc.current();
    QSignalSpy progress(&doc, &ModelDocument::loadProgress);
    QSignalSpy cancelled(&doc, &ModelDocument::loadCancelled);
    QSignalSpy changed(&doc, &ModelDocument::modelChanged);
    doc.open(QStringLiteral("/models/huge.gguf"));
    ASSERT_TRUE(waitUntil([&] { return progress.size() > 0; }));
    EXPECT_EQ(progress.front().at(1).toString(), QStringLiteral("reading tensors"));
    doc.cancel();
    EXPECT_EQ(cancelled.size(), 1);
    EXPECT_EQ(cancelled.front().front().toString(), QStringLiteral("/models/huge.gguf"));
    doc.job()->waitForWorkers();
    waitUntil([] { return false; }, 100);
    EXPECT_EQ(changed.size(), 0);
    EXPECT_EQ(doc.current(), before);
}

TEST(ModelDocument, ANewerOpenSupersedesTheOlder) {
    ModelDocument doc(nullptr,
                      [](const std::string& path, const edge::model::LoadOptions&,
                         edge::Progress*) -> edge::Result<edge::model::Model> {
                          if (path == "/slow.gguf") std::this_thread::sleep_for(std::chrono::milliseconds(200));
                          return edge::views::test::tinyModel(1, 8, path == "/slow.gguf" ? "slow" : "fast");
                      });
    QSignalSpy changed(&doc, &ModelDocument::modelChanged);
    doc.open(QStringLiteral("/slow.gguf"));
    doc.open(QStringLiteral("/fast.gguf"));
    ASSERT_TRUE(waitUntil([&] { return changed.size() == 1; }));
    doc.job()->waitForWorkers();
    waitUntil([] { return false; }, 100);
    EXPECT_EQ(changed.size(), 1);
    EXPECT_EQ(doc.current()->model.name, "fast");
    EXPECT_EQ(doc.path(), QStringLiteral("/fast.gguf"));
}

// Opening a model in the studio reads its header and tensor table only (Model and Layers pages
// populated, tensor pages left on disk); the first job that computes over the weights reads them
// once, and later jobs share that copy.
TEST(ModelDocument, OpensWithoutReadingTheWeightsAndReadsThemOnceForJobs) {
    edge::model::SynthOptions o;
    o.config = edge::model::find_synth_shape("stories260k")->config;
    o.config->dim = 512;
    o.config->hidden_dim = 1536;
    o.config->n_heads = 8;
    o.config->n_kv_heads = 4;
    o.config->head_dim = o.config->rope_dim = 64;
    o.config->vocab_size = 4096;
    o.path = (edge::test::temp_dir("views-lazy") / "wide.gguf").string();
    o.threads = 2;
    ASSERT_TRUE(edge::model::write_synth_model(o).ok());
    auto header = edge::model::gguf::open(o.path);
    ASSERT_TRUE(header.ok());
    const uint64_t data_start = header->data_offset;
    header = edge::Error{};
    ASSERT_TRUE(edge::test::drop_from_page_cache(o.path));

    ModelDocument doc;
    QSignalSpy changed(&doc, &ModelDocument::modelChanged);
    doc.open(QString::fromStdString(o.path));
    ASSERT_TRUE(waitUntil([&] { return changed.size() == 1; }));
    auto loaded = doc.current();
    ASSERT_TRUE(loaded);
    EXPECT_EQ(int(loaded->layers.size()), o.config->n_layers * 7 + 1);
    EXPECT_EQ(loaded->model.weight_bytes(), 0u);
    const double resident = edge::test::resident_fraction(o.path, data_start);
    EXPECT_GE(resident, 0.0);
    EXPECT_LT(resident, 0.01);

    auto full = loaded->withWeights();
    ASSERT_TRUE(full.ok()) << full.message();
    EXPECT_TRUE(edge::model::weights_resident(**full));
    EXPECT_GT((*full)->weight_bytes(), 0u);
    auto again = loaded->withWeights();
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->get(), full->get());
}
