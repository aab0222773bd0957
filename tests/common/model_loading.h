// Loading a model in a test that needs it (header-only: test_support does not link the engine).
#pragma once
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <utility>

#include "engine/core/mapped_file.h"
#include "engine/model/loader.h"
#include "engine/model/synth.h"
#include "engine/quant/calib.h"
#include "engine/tokenizer/tokenizer.h"
#include "test_support.h"

namespace edge::test {

// The model at `path`, opened lazily (weights unread) or eagerly; a failed load is a test failure
// and gives an empty model.
inline model::Model load_or_die(const std::string& path, bool lazy) {
    model::LoadOptions lo;
    lo.lazy_weights = lazy;
    auto m = model::load_model(path, lo);
    EXPECT_TRUE(m.ok()) << m.message();
    return m.ok() ? std::move(m).value() : model::Model{};
}

// Calibration windows from the second half of ../shared's tinystories_val.txt (the first half is
// what tests evaluate on), tokenized by `m`'s tokenizer; a failure is a test failure and gives none.
inline quant::CalibSet val_calibration(const model::Model& m, int n_seq, int seq_len) {
    auto text = read_text_file(shared("data/tinystories_val.txt"));
    EXPECT_TRUE(text.ok()) << text.message();
    auto tok = tokenizer::make_tokenizer(m.tokenizer);
    EXPECT_TRUE(tok.ok()) << tok.message();
    if (!text.ok() || !tok.ok()) return {};
    auto c = quant::calib_from_text(**tok, std::string_view(*text).substr(text->size() / 2), n_seq, seq_len);
    EXPECT_TRUE(c.ok()) << c.message();
    return c.ok() ? std::move(c).value() : quant::CalibSet{};
}

// A stories260K-shaped model of 4 blocks with seeded random F16 weights and an own or a tied head,
// written as `dir`/own.gguf or tied.gguf: what the block-by-block tests open lazily to count the
// FP32 weights alive. Its path ("" and a test failure when it cannot be written).
inline std::string four_block_f16_gguf(const std::filesystem::path& dir, bool tied) {
    model::SynthOptions so;
    so.config = model::find_synth_shape("stories260k")->config;
    so.config->n_layers = 4;
    so.tied_embeddings = tied;
    so.path = (dir / (tied ? "tied.gguf" : "own.gguf")).string();
    so.type = DType::F16;
    so.threads = 2;
    auto st = model::write_synth_model(so);
    EXPECT_TRUE(st.ok()) << st.message();
    return st.ok() ? so.path : std::string();
}

}  // namespace edge::test
