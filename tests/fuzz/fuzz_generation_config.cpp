// libFuzzer target: generation_config.json text -> parse_generation_config (EOS / BOS ids as int or
// list, sampling defaults, do_sample) into an empty tokenizer spec with a 32,000-token vocabulary;
// what it accepts must keep the spec's invariant: eos_id is one of the EOS ids.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "engine/model/hf_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size > (1u << 16)) return 0;
    edge::tokenizer::TokenizerSpec t;
    auto st = edge::model::parse_generation_config(std::string(reinterpret_cast<const char*>(data), size),
                                                   "<fuzz>/generation_config.json", 32000, t);
    if (!st.ok()) return 0;
    if (t.eos_id >= 0 && !t.ends_generation(t.eos_id)) std::abort();
    for (int32_t e : t.eos_ids)
        if (e < 0 || e >= 32000) std::abort();
    return 0;
}
