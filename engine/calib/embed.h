// Model embeddings of calibration-pool samples, through the runtime's own executors (no LibTorch):
//  - LLM: the final hidden state (after the output RMSNorm, i.e. what the output head reads) of
//    every token of the sample, mean-pooled over the sample's tokens (BOS excluded). Taken with
//    LlamaCpu's existing linear-layer hook at the head (block -1), so the executor is unchanged.
//  - CNN: the penultimate features: the input of the graph's last weighted op (Linear, or Conv2d
//    for fully convolutional heads), flattened per image.
// A text pool is split into samples the way `quantize --calib` reads calibration text:
// paragraphs separated by blank lines, each trimmed, empty ones skipped.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/calib/select.h"
#include "engine/core/progress.h"
#include "engine/core/result.h"
#include "engine/model/ir.h"
#include "engine/tokenizer/tokenizer.h"

namespace edge::calib {

std::vector<std::string> split_paragraphs(std::string_view text);
// The inverse: samples joined by blank lines (a file `quantize --calib` accepts).
std::string join_paragraphs(const std::vector<std::string>& samples);

struct LlmEmbedOptions {
    int max_tokens = 128;  // per sample, BOS included; longer samples are cut
    int threads = 0;
};

struct LlmPoolEmbeddings {
    Embeddings emb;
    std::vector<int> tokens;  // tokens per sample as encoded (BOS included, before the cut)
};

// Errors: an empty pool, a sample that encodes to no token (names its index).
Result<LlmPoolEmbeddings> llm_embeddings(const std::shared_ptr<const model::Model>& model,
                                         const tokenizer::Tokenizer& tok, const std::vector<std::string>& samples,
                                         const LlmEmbedOptions& opts = {}, const Progress* progress = nullptr);

// The model cut after its penultimate features (the graph's output becomes the input of the last
// weighted op). Weights are shared, not copied. Errors name the model when it has no weighted op
// with a preceding activation.
Result<model::Model> cnn_feature_model(const model::Model& cnn);

// Penultimate features of `count` images (pixels already scaled, count x C x H x W as the model
// declares), run in batches.
Result<Embeddings> cnn_features(const model::Model& cnn, const std::vector<float>& pixels, int64_t count,
                                int64_t batch = 100, int threads = 0, const Progress* progress = nullptr);

}  // namespace edge::calib
