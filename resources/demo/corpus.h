// The demo corpus: short children's stories from a small, seeded grammar (characters, places,
// objects; articles, plurals, pronouns and verbs agree). The same seed gives the same text on
// every platform (own PRNG, no std distributions).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace edge::demo {

// One story of a few sentences, without separators.
std::string make_story(uint64_t& rng_state);

// Stories until the text reaches `min_bytes`, separated like TinyStories files
// ("\n<|endoftext|>\n"), so the `story` perplexity protocol splits them.
std::string make_corpus(uint64_t seed, size_t min_bytes);

// The stories of a corpus (split on <|endoftext|>, trimmed, empty parts dropped).
std::vector<std::string> split_stories(const std::string& corpus);

}  // namespace edge::demo
