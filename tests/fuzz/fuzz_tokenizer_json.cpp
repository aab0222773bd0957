// libFuzzer target: tokenizer.json text -> make_hf_tokenizer (model, vocab, merges, added tokens,
// normalizer, pre-tokenizer, decoder) -> for one that builds, encode and decode a fixed text, and
// its GGUF translation (gguf_from_tokenizer_json, what GGUF export writes).
#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/tokenizer/front_ends.h"
#include "engine/tokenizer/gguf_translate.h"
#include "engine/tokenizer/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    edge::tokenizer::TokenizerSpec spec;
    spec.model = "hf";
    spec.source = "<fuzz>/tokenizer.json";
    spec.hf_json.assign(reinterpret_cast<const char*>(data), size);
    auto t = edge::tokenizer::make_hf_tokenizer(spec);
    if (!t.ok()) return 0;
    const auto ids = (*t)->encode("Once upon a time, Lily said \"hi\" 123 \xe4\xbd\xa0\xe5\xa5\xbd!", true);
    (void)(*t)->decode(ids);
    auto g = edge::tokenizer::gguf_from_tokenizer_json(spec);
    (void)g;
    return 0;
}
