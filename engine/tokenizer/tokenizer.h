// Tokenizers built from a TokenizerSpec: SentencePiece-style ("llama": score-ordered merges with
// byte fallback), byte-level BPE ("gpt2": rank-ordered merges, pre-tokenizer split chosen by
// spec.pre, e.g. the Llama-3 regex), and BPE from a tokenizer.json ("hf").
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/result.h"
#include "engine/tokenizer/spec.h"

namespace edge::tokenizer {

class Tokenizer {
public:
    virtual ~Tokenizer() = default;

    // Encodes text. add_bos prepends the BOS id (when the vocabulary has one). The SentencePiece
    // dummy-prefix space is added when the spec says so (add_space_prefix), independent of BOS.
    virtual std::vector<int32_t> encode(std::string_view text, bool add_bos) const = 0;
    // Text of one token as it should be appended after `prev` (SentencePiece strips the leading
    // space of the first piece after BOS; byte tokens yield their raw byte).
    virtual std::string piece(int32_t id, int32_t prev) const = 0;
    // Whole-sequence decode (BOS/EOS and other control tokens are dropped).
    virtual std::string decode(const std::vector<int32_t>& ids) const;

    virtual int vocab_size() const = 0;
    virtual int bos_id() const = 0;
    virtual int eos_id() const = 0;
    // The id of the token that stands for one raw byte (<0x0A> for '\n'), or -1.
    virtual int32_t byte_token(uint8_t b) const = 0;
    // The vocabulary string of one id ("" when out of range).
    virtual std::string token_text(int32_t id) const = 0;
    // Where this tokenizer knowingly differs from its file (e.g. a tokenizer.json NFC
    // normalizer applied as identity), for the user to see; empty when it is exact.
    virtual std::vector<std::string> notes() const { return {}; }
};

Result<std::unique_ptr<Tokenizer>> make_tokenizer(const TokenizerSpec& spec);

// llama2.c tokenizer.bin: int32 max_token_len, then per token f32 score, int32 len, bytes.
// vocab_size comes from the checkpoint header. BOS=1, EOS=2, byte tokens <0xXX> at id byte+3.
// vocab_size <= 0 reads tokens up to the end of the file. Bytes left over after vocab_size
// tokens are an error (the tokenizer does not belong to that checkpoint).
Result<TokenizerSpec> load_llama2c_tokenizer(const std::string& path, int vocab_size);

}  // namespace edge::tokenizer
