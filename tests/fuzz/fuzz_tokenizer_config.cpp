// libFuzzer target: tokenizer_config.json text -> parse_tokenizer_config (add_bos_token, a
// chat_template string or a list of named templates with "default" chosen). What it accepts must
// keep its promises: a template no larger than its bound, named by the file it came from, and a
// spec untouched except for add_bos and the template.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "engine/model/hf_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size > (1u << 21)) return 0;
    edge::tokenizer::TokenizerSpec t;
    t.bos_id = 1;
    const std::string origin = "<fuzz>/tokenizer_config.json";
    auto st = edge::model::parse_tokenizer_config(std::string(reinterpret_cast<const char*>(data), size), origin, t);
    if (!st.ok()) {
        if (st.message().rfind(origin, 0) != 0) std::abort();  // every error names the file first
        return 0;
    }
    if (t.chat_template.size() > (1u << 20)) std::abort();
    if (!t.chat_template.empty() && t.chat_template_source != origin) std::abort();
    if (t.bos_id != 1 || !t.tokens.empty()) std::abort();
    return 0;
}
