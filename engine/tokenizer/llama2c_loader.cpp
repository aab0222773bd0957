// llama2.c tokenizer.bin reader.
#include <cmath>
#include <cstring>

#include "engine/core/mapped_file.h"
#include "engine/tokenizer/pipeline.h"
#include "engine/tokenizer/text_util.h"
#include "engine/tokenizer/tokenizer.h"

namespace edge::tokenizer {

Result<TokenizerSpec> load_llama2c_tokenizer(const std::string& path, int vocab_size) {
    auto file = MappedFile::open(path);
    if (!file) return file.error();
    const uint8_t* d = (*file)->data();
    const size_t size = (*file)->size();
    auto read_i32 = [&](size_t off) {
        int32_t v;
        std::memcpy(&v, d + off, 4);
        return v;
    };
    if (size < 4) return err(path, ": ", size, " bytes is too short for a llama2.c tokenizer");
    const int32_t max_len = read_i32(0);
    if (max_len <= 0) return err(path, ": max_token_len ", max_len, " at offset 0 is not positive");

    TokenizerSpec spec;
    spec.model = "llama";
    spec.source = path;
    spec.bos_id = 1;
    spec.eos_id = 2;
    spec.unk_id = 0;
    spec.add_bos = true;
    spec.add_space_prefix = true;
    size_t off = 4;
    const bool to_end = vocab_size <= 0;
    for (int i = 0; to_end ? off < size : i < vocab_size; ++i) {
        if (size - off < 8)
            return err(path, ": token ", i, " header at offset ", off, " runs past the end (", size, " bytes)");
        float score;
        std::memcpy(&score, d + off, 4);
        const int32_t len = read_i32(off + 4);
        if (!std::isfinite(score)) return err(path, ": token ", i, " at offset ", off, " has a non-finite score");
        if (len < 0 || static_cast<size_t>(len) > size - off - 8)
            return err(path, ": token ", i, " length ", len, " at offset ", off + 4, " runs past the end of the file (",
                       size, " bytes)");
        spec.tokens.emplace_back(reinterpret_cast<const char*>(d + off + 8), len);
        spec.scores.push_back(score);
        off += 8 + static_cast<size_t>(len);
    }
    if (off != size)
        return err(path, ": ", size - off, " bytes left at offset ", off, " after ", vocab_size,
                   " tokens: the tokenizer does not match the model's vocabulary size");
    const auto n = static_cast<int32_t>(spec.tokens.size());
    if (n < 3) return err(path, ": only ", n, " tokens; <unk>, <s> and </s> are required");
    spec.token_types.resize(n, tokenizer::kTypeNormal);
    spec.token_types[0] = tokenizer::kTypeUnknown;
    spec.token_types[1] = tokenizer::kTypeControl;
    spec.token_types[2] = tokenizer::kTypeControl;
    for (int32_t i = 3; i < n; ++i)
        if (tokenizer::parse_byte_token(spec.tokens[i]) >= 0) spec.token_types[i] = tokenizer::kTypeByte;
    return spec;
}

}  // namespace edge::tokenizer
