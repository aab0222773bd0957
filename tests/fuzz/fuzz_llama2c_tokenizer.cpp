// libFuzzer target: llama2.c tokenizer.bin bytes -> load_llama2c_tokenizer, read to the end of the
// file and as a 512-token vocabulary (stories260K's); for a file that loads, the SentencePiece-style
// tokenizer is built and encodes and decodes a fixed text (merges by score, byte fallback).
#include <cstddef>
#include <cstdint>

#include "engine/tokenizer/tokenizer.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string& path = edge::fuzz::write_input(data, size, ".tok.bin");
    (void)edge::tokenizer::load_llama2c_tokenizer(path, 512);
    auto spec = edge::tokenizer::load_llama2c_tokenizer(path, 0);
    if (!spec.ok()) return 0;
    auto t = edge::tokenizer::make_tokenizer(*spec);
    if (!t.ok()) return 0;
    const auto ids = (*t)->encode("Once upon a time, Lily said \"hi\" 123 \xe4\xbd\xa0\xe5\xa5\xbd!\n\t\x01", true);
    (void)(*t)->decode(ids);
    for (int32_t id : {-1, 0, 1, 2, 3, (*t)->vocab_size() - 1, (*t)->vocab_size()}) {
        (void)(*t)->piece(id, 1);
        (void)(*t)->token_text(id);
    }
    return 0;
}
