// Chat prompts: the model's chat template rendered over a conversation, then encoded with the
// special tokens the template writes (chat.h).
#include "engine/tokenizer/chat.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <ctime>

#include "engine/core/json_util.h"
#include "engine/tokenizer/chat_template.h"
#include "engine/tokenizer/pipeline.h"
#include "engine/tokenizer/tokenizer.h"

namespace edge::tokenizer {

namespace {

// The text a special token is written as in a template ("<s>", "<|begin_of_text|>").
std::string special_text(const TokenizerSpec& spec, const Tokenizer& tok, int32_t id) {
    if (id < 0) return {};
    if (id < int32_t(spec.tokens.size())) return spec.tokens[size_t(id)];
    return tok.token_text(id);
}

bool is_special(const TokenizerSpec& spec, size_t id) {
    if (id < spec.token_types.size())
        return spec.token_types[id] == tokenizer::kTypeControl || spec.token_types[id] == tokenizer::kTypeUserDefined;
    // Files without token types (llama2.c): BOS and EOS are the control tokens.
    return int32_t(id) == spec.bos_id || int32_t(id) == spec.eos_id;
}

}  // namespace

Result<std::vector<ChatMessage>> parse_chat_messages(std::string_view json_text, const std::string& origin) {
    auto parsed = parse_json(json_text, origin);
    if (!parsed) return parsed.error();
    const nlohmann::json& j = *parsed;
    if (!j.is_array())
        return err(origin, ": a conversation is a list of {\"role\": ..., \"content\": ...}, found ", json_excerpt(j));
    std::vector<ChatMessage> out;
    for (size_t i = 0; i < j.size(); ++i) {
        const nlohmann::json& m = j[i];
        for (const char* field : {"role", "content"})
            if (!m.is_object() || !m.contains(field) || !m[field].is_string())
                return err(origin, ": message ", i, " needs a text \"", field, "\", found ", json_excerpt(m));
        out.push_back({m["role"].get<std::string>(), m["content"].get<std::string>()});
    }
    return out;
}

std::vector<int32_t> encode_with_specials(const TokenizerSpec& spec, const Tokenizer& tok, std::string_view text) {
    // Byte-level and tokenizer.json vocabularies split their control and added tokens out of
    // the text themselves; SentencePiece ones match only user-defined pieces, so their control
    // tokens (<s>, </s>, [INST]-style additions) are split here.
    if (spec.model != "llama") return tok.encode(text, false);
    std::vector<int32_t> specials;
    for (size_t i = 0; i < spec.tokens.size(); ++i)
        if (is_special(spec, i) && !spec.tokens[i].empty()) specials.push_back(int32_t(i));
    std::stable_sort(specials.begin(), specials.end(), [&](int32_t a, int32_t b) {
        return spec.tokens[size_t(a)].size() > spec.tokens[size_t(b)].size();
    });
    std::vector<int32_t> out;
    auto flush = [&](std::string_view piece) {
        if (piece.empty()) return;
        const std::vector<int32_t> ids = tok.encode(piece, false);
        out.insert(out.end(), ids.begin(), ids.end());
    };
    size_t seg = 0;
    for (size_t i = 0; i < text.size();) {
        int32_t hit = -1;
        for (int32_t id : specials)
            if (text.compare(i, spec.tokens[size_t(id)].size(), spec.tokens[size_t(id)]) == 0) {
                hit = id;
                break;
            }
        if (hit < 0) {
            ++i;
            continue;
        }
        flush(text.substr(seg, i - seg));
        out.push_back(hit);
        i += spec.tokens[size_t(hit)].size();
        seg = i;
    }
    flush(text.substr(seg));
    return out;
}

Result<ChatPrompt> render_chat_prompt(const TokenizerSpec& spec, const Tokenizer& tok,
                                      const std::vector<ChatMessage>& messages, bool add_generation_prompt) {
    const std::string& origin = spec.chat_template_source.empty() ? spec.source : spec.chat_template_source;
    if (spec.chat_template.empty())
        return err(spec.source.empty() ? std::string("the model") : spec.source,
                   ": has no chat template (tokenizer_config.json \"chat_template\" or GGUF "
                   "tokenizer.chat_template); give the prompt as plain text instead");
    auto tpl = ChatTemplate::parse(spec.chat_template, origin);
    if (!tpl) return tpl.error();
    nlohmann::ordered_json ctx;
    ctx["messages"] = nlohmann::ordered_json::array();
    for (const ChatMessage& m : messages) ctx["messages"].push_back({{"role", m.role}, {"content", m.content}});
    ctx["add_generation_prompt"] = add_generation_prompt;
    // transformers passes the tokenizer's special tokens by name.
    const std::pair<const char*, int32_t> named[] = {
        {"bos_token", spec.bos_id}, {"eos_token", spec.eos_id}, {"unk_token", spec.unk_id}, {"pad_token", spec.pad_id}};
    for (const auto& [name, id] : named)
        if (id >= 0) ctx[name] = special_text(spec, tok, id);
    // As transformers: strftime_now(format) is today's local date and time (Llama 3.x system
    // prompts print it).
    RenderHooks hooks;
    hooks.strftime_now = [](const std::string& format) {
        const std::time_t now = std::time(nullptr);
        std::tm local{};
        localtime_r(&now, &local);
        char buf[256];
        const size_t n = std::strftime(buf, sizeof buf, format.c_str(), &local);
        return std::string(buf, n);
    };
    auto text = tpl->render(ctx, hooks);
    if (!text) return text.error();
    ChatPrompt p;
    p.text = std::move(text).value();
    p.ids = encode_with_specials(spec, tok, p.text);
    return p;
}

}  // namespace edge::tokenizer
