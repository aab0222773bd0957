// Calibration kept apart from evaluation (engine/quant/calib.h remove_evaluation_paragraphs,
// engine/validate/perplexity.h ppl_scored_text): no paragraph the evaluation scores calibrates.
#include <gtest/gtest.h>

#include "engine/core/mapped_file.h"
#include "engine/model/loader.h"
#include "engine/quant/calib.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/validate/perplexity.h"
#include "test_support.h"

using edge::model::load_model;
using edge::tokenizer::make_tokenizer;
using edge::validate::ppl_scored_text;
using edge::validate::ppl_sequences;
using edge::validate::PplOptions;
using edge::validate::PplProtocol;

using namespace edge;
using namespace edge::quant;

TEST(CalibText, EvaluationParagraphsAreRemovedEvenWhenSpacedDifferently) {
    const std::string calib =
        "Once upon a time there was a little dog named Max.\nHe liked to run.\n"  // 1: in the evaluation
        "\n"
        "A girl found a   shiny red ball in the park\tone day.\n"  // 4: same text, other spacing
        "\n\n"
        "Tom and Sue baked a cake for their mother.<|endoftext|>Ben saw a big boat on the lake today.\n"  // 7: kept, kept
        "\n"
        "The end.\nMia smiled at her new friend.\n"  // 9: kept (a short line is not shared text)
        "\n"
        "The sun was hot and the birds sang in the tall trees.\nA new line here.\n";  // 12: one line shared
    const std::string eval =
        "Once upon a time there was a little dog named Max.\nHe liked to run.\n<|endoftext|>\n"
        "A girl found a shiny red ball in the park one day.\n\nThe end.\n\n"
        "Someone said: the sun was hot and the birds sang.\nThe sun was hot and the birds sang in the tall trees.\n";
    const DisjointCalib d = remove_evaluation_paragraphs(calib, eval);
    EXPECT_EQ(d.paragraphs, 6u);
    EXPECT_EQ(d.removed, 3u);
    EXPECT_EQ(d.lines, (std::vector<size_t>{1, 4, 12}));
    EXPECT_EQ(d.text,
              "Tom and Sue baked a cake for their mother.\n\nBen saw a big boat on the lake today.\n\n"
              "The end.\nMia smiled at her new friend.");
    EXPECT_EQ(describe(d), "kept 3 of 6 paragraphs; 3 also in the evaluation text were removed (lines 1, 4, 12)");
    // Nothing shared: everything kept.
    const DisjointCalib none = remove_evaluation_paragraphs("Alpha beta gamma delta epsilon.\n", eval);
    EXPECT_EQ(none.removed, 0u);
    EXPECT_EQ(describe(none), "kept 1 of 1 paragraphs; none is in the evaluation text");
}

// The studio's default: the evaluation file also calibrates, minus the stories validation scores.
// On the real sample, the scored stories are exactly the ones removed, and the rest calibrates.
TEST(CalibText, TheScoredStoriesOfTheSampleNeverCalibrate) {
    const std::string gguf = edge::test::shared("models/stories260K/stories260K.gguf");
    const std::string sample = edge::test::shared("data/tinystories_sample.txt");
    EDGE_REQUIRE_SHARED(gguf);
    EDGE_REQUIRE_SHARED(sample);
    auto m = load_model(gguf, {}, nullptr);
    ASSERT_TRUE(m.ok()) << m.message();
    auto tok = make_tokenizer(m->tokenizer);
    ASSERT_TRUE(tok.ok()) << tok.message();
    auto text = read_text_file(sample);
    ASSERT_TRUE(text.ok());
    PplOptions o;
    o.protocol = PplProtocol::Story;
    o.max_parts = 3;
    o.max_tokens = 128;
    auto scored = ppl_scored_text(**tok, *text, o);
    ASSERT_TRUE(scored.ok()) << scored.message();
    auto seqs = ppl_sequences(**tok, *text, o);
    ASSERT_TRUE(seqs.ok());
    ASSERT_EQ(seqs->size(), 3u);
    // The scored text tokenizes to the scored sequences' first tokens.
    const auto first = (*tok)->encode(scored->substr(0, scored->find("\n\n")), true);
    ASSERT_GE(first.size(), 8u);
    EXPECT_TRUE(std::equal(first.begin(), first.begin() + 8, (*seqs)[0].begin()));

    const DisjointCalib d = remove_evaluation_paragraphs(*text, *scored);
    EXPECT_GT(d.removed, 0u);
    EXPECT_LT(d.removed, d.paragraphs);
    // No paragraph of what is scored is left in the calibration text, checked the other way round.
    const DisjointCalib back = remove_evaluation_paragraphs(*scored, d.text);
    EXPECT_EQ(back.removed, 0u) << describe(back);
    auto set = calib_from_text(**tok, d.text, 4, 64);
    ASSERT_TRUE(set.ok()) << set.message();
    EXPECT_EQ(set->sequences.size(), 4u);

    // Stream: the lines the first window covers.
    o.protocol = PplProtocol::Stream;
    o.max_parts = 1;
    auto lines = ppl_scored_text(**tok, *text, o);
    ASSERT_TRUE(lines.ok());
    EXPECT_FALSE(lines->empty());
    EXPECT_LT(lines->size(), text->size());
}
