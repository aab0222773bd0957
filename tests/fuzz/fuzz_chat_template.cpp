// libFuzzer target: chat template text (tokenizer_config.json's chat_template, GGUF
// tokenizer.chat_template - bytes from a downloaded model) -> ChatTemplate::parse, then a render
// over a fixed conversation with tools. Whatever the template, parse and render return a Result:
// no crash, no hang (the renderer bounds depth, output and work), output within its 16 MiB cap.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "engine/tokenizer/chat_template.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size > (1u << 16)) return 0;
    auto t = edge::tokenizer::ChatTemplate::parse(std::string(reinterpret_cast<const char*>(data), size),
                                                  "<fuzz>/chat_template");
    if (!t.ok()) return 0;
    static const nlohmann::ordered_json context = nlohmann::ordered_json::parse(R"({
        "messages": [
            {"role": "system", "content": "You are brief."},
            {"role": "user", "content": "Hi \u4f60\u597d \"quoted\"\n"},
            {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function":
                {"name": "get_time", "arguments": {"zone": "UTC", "n": [1, 2.5, null, true]}}}]},
            {"role": "tool", "content": "12:00"},
            {"role": "user", "content": "Thanks"}],
        "tools": [{"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}}],
        "add_generation_prompt": true, "bos_token": "<s>", "eos_token": "</s>"})");
    auto out = t->render(context);
    if (out.ok() && out->size() > (size_t(16) << 20)) std::abort();
    return 0;
}
