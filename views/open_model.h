// Choosing what to open: a model file (.gguf, .bin, .safetensors, ...) or a Hugging Face folder,
// and, for a llama2.c checkpoint with no tokenizer beside it, the tokenizer file.
#pragma once
#include <QString>

#include <optional>

class QWidget;

namespace edge::views {

struct OpenChoice {
    QString path;
    QString tokenizer;  // empty: the format embeds one, or the loader finds it beside the model
};

std::optional<OpenChoice> chooseModelFile(QWidget* parent, const QString& startDir);
std::optional<OpenChoice> chooseModelFolder(QWidget* parent, const QString& startDir);
// For a llama2.c .bin without tokenizer.bin / tok*.bin beside it, asks for the tokenizer; returns
// the choice with the tokenizer filled in, or nullopt when the user cancels.
std::optional<OpenChoice> completeChoice(QWidget* parent, OpenChoice choice);
// True when `path` is a llama2.c checkpoint with no tokenizer file beside it.
bool needsTokenizer(const QString& path);

}  // namespace edge::views
