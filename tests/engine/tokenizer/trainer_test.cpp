// The BPE trainer: a SentencePiece-style vocabulary for the demo model.
#include <chrono>
#include <cstdio>

#include "engine/tokenizer/bpe_trainer.h"
#include "engine/tokenizer/tokenizer.h"
#include "test_support.h"
#include "tok_test_util.h"

using edge::tokenizer::make_tokenizer;
using edge::tokenizer::train_bpe;

namespace edge {
namespace {

TEST(BpeTrainer, SentencePieceStyleRoundTripsAndCompresses) {
    EDGE_REQUIRE_SHARED(test::shared("data/tinystories_val.txt"));
    EDGE_REQUIRE_SHARED(test::shared("data/tinystories_sample.txt"));
    const std::string val = test::read_shared("data/tinystories_val.txt");
    const std::string_view train = std::string_view(val).substr(0, 200000);
    const auto t0 = std::chrono::steady_clock::now();
    auto spec = train_bpe(train, {512, false, 2});
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_TRUE(spec.ok()) << spec.message();
    std::printf("[ timing   ] trained a %zu-piece vocabulary on %zu bytes in %.3f s\n", spec->tokens.size(),
                train.size(), s);
    ASSERT_EQ(spec->tokens.size(), 512u);
    EXPECT_EQ(spec->model, "llama");
    EXPECT_EQ(spec->tokens[0], "<unk>");
    EXPECT_EQ(spec->tokens[1], "<s>");
    EXPECT_EQ(spec->tokens[3 + 'A'], "<0x41>");
    for (size_t i = 260; i < 512; ++i) EXPECT_LT(spec->scores[i], spec->scores[i - 1]) << i;
    auto t = make_tokenizer(*spec);
    ASSERT_TRUE(t.ok()) << t.message();
    const std::string sample = test::read_shared("data/tinystories_sample.txt");
    EXPECT_EQ((*t)->decode((*t)->encode(sample, true)), sample);
    auto paras = test::split_parts(val, "\n\n");
    size_t tokens = 0, bytes = 0;
    for (size_t i = 3000; i < paras.size(); ++i) {  // text the trainer did not see
        auto ids = (*t)->encode(paras[i], true);
        ASSERT_EQ((*t)->decode(ids), paras[i]) << i;
        tokens += ids.size() - 1;
        bytes += paras[i].size();
    }
    std::printf("[ ratio    ] %.2f bytes per token on held-out paragraphs\n", double(bytes) / tokens);
    EXPECT_LT(tokens, bytes / 2);
    // The learned merges replay: a frequent word is one piece.
    auto once = (*t)->encode("Once upon a time", false);
    EXPECT_LE(once.size(), 6u);
}

TEST(BpeTrainer, ByteLevelAndBadArguments) {
    auto spec = train_bpe("low lower lowest low low lower newest newest widest", {270, true, 2});
    ASSERT_TRUE(spec.ok()) << spec.message();
    EXPECT_EQ(spec->model, "gpt2");
    EXPECT_FALSE(spec->merges.empty());
    auto t = make_tokenizer(*spec);
    ASSERT_TRUE(t.ok()) << t.message();
    EXPECT_LT((*t)->encode(" lowest", false).size(), 7u);
    EXPECT_TRUE(edge::test::fails_with(train_bpe("", {512, false, 2}), {"BPE trainer", "the training text is empty"}));
    EXPECT_TRUE(
        edge::test::fails_with(train_bpe("abc", {100, false, 2}),
                               {"BPE trainer", "vocab_size 100 leaves no room after the 259 control and byte tokens"}));
}

}  // namespace
}  // namespace edge
