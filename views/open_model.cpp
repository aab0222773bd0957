#include "views/open_model.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>

namespace edge::views {

namespace {
// Translation context for the free functions of this file.
struct OpenModel {
    Q_DECLARE_TR_FUNCTIONS(edge::views::OpenModel)
};
}  // namespace

bool needsTokenizer(const QString& path) {
    const QFileInfo fi(path);
    if (fi.isDir() || fi.suffix().compare(QLatin1String("bin"), Qt::CaseInsensitive) != 0) return false;
    const QDir dir = fi.absoluteDir();
    if (dir.exists(QStringLiteral("tokenizer.bin"))) return false;
    const QStringList toks = dir.entryList({QStringLiteral("tok*.bin")}, QDir::Files);
    for (const QString& t : toks)
        if (t != fi.fileName()) return false;
    return true;
}

std::optional<OpenChoice> completeChoice(QWidget* parent, OpenChoice choice) {
    if (!choice.tokenizer.isEmpty() || !needsTokenizer(choice.path)) return choice;
    const QString tok = QFileDialog::getOpenFileName(
        parent, OpenModel::tr("Choose the tokenizer for %1").arg(QFileInfo(choice.path).fileName()),
        QFileInfo(choice.path).absolutePath(), OpenModel::tr("llama2.c tokenizer (*.bin);;All files (*)"));
    if (tok.isEmpty()) return std::nullopt;
    choice.tokenizer = tok;
    return choice;
}

std::optional<OpenChoice> chooseModelFile(QWidget* parent, const QString& startDir) {
    const QString filters = OpenModel::tr("Models (*.gguf *.bin *.safetensors *.onnx *.pt)") + QStringLiteral(";;") +
                            OpenModel::tr("GGUF (*.gguf)") + QStringLiteral(";;") +
                            OpenModel::tr("llama2.c checkpoint (*.bin)") + QStringLiteral(";;") +
                            OpenModel::tr("All files (*)");
    const QString path = QFileDialog::getOpenFileName(parent, OpenModel::tr("Open model"), startDir, filters);
    if (path.isEmpty()) return std::nullopt;
    return completeChoice(parent, OpenChoice{path, {}});
}

std::optional<OpenChoice> chooseModelFolder(QWidget* parent, const QString& startDir) {
    const QString dir = QFileDialog::getExistingDirectory(
        parent, OpenModel::tr("Open a Hugging Face model folder (safetensors + config.json + tokenizer.json)"),
        startDir);
    if (dir.isEmpty()) return std::nullopt;
    return OpenChoice{dir, {}};
}

}  // namespace edge::views
