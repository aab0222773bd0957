#include "engine/tokenizer/regex_split.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>

#include "engine/tokenizer/text_util.h"

namespace edge::tokenizer {

const char* const kGpt2Pattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
const char* const kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

namespace {
pcre2_code* as_code(void* p) { return static_cast<pcre2_code*>(p); }

// Qwen2 / Qwen2.5: Llama 3's regex with single digits.
const char* const kQwen2Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// Every digit on its own (tokenizer.json's Digits pre-tokenizer with individual_digits).
const char* const kDigitPattern = R"(\p{N})";
}  // namespace

const std::vector<PreTokenizerPatterns>& gguf_pre_tokenizers() {
    static const std::vector<PreTokenizerPatterns> table = {
        {"gpt2", {kGpt2Pattern}, false},
        {"gpt-2", {kGpt2Pattern}, false},
        {"llama-bpe", {kLlama3Pattern}, true},
        {"llama3", {kLlama3Pattern}, true},
        {"qwen2", {kQwen2Pattern}, false},
        // SmolLM / SmolLM2: digits split one by one, then GPT-2's regex.
        {"smollm", {kDigitPattern, kGpt2Pattern}, false},
    };
    return table;
}

const PreTokenizerPatterns* find_pre_tokenizer(std::string_view name) {
    if (name.empty() || name == "default") name = "gpt2";
    for (const auto& p : gguf_pre_tokenizers())
        if (name == p.name) return &p;
    return nullptr;
}

Result<std::shared_ptr<const Regex>> Regex::compile(std::string_view pattern, bool literal, std::string_view where) {
    int errcode = 0;
    PCRE2_SIZE erroff = 0;
    // UCP makes \s, \w and friends Unicode-aware, as the Rust/Oniguruma engines that the
    // reference tokenizers use are.
    uint32_t options = PCRE2_UTF | PCRE2_UCP;
    if (literal) options = PCRE2_LITERAL | PCRE2_UTF;
    pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), options, &errcode,
                                     &erroff, nullptr);
    if (!code) {
        PCRE2_UCHAR buf[256];
        pcre2_get_error_message(errcode, buf, sizeof buf);
        return err(where, ": bad regex at offset ", static_cast<size_t>(erroff), ": ",
                   reinterpret_cast<const char*>(buf));
    }
    // JIT is an optimisation only; without it pcre2_match interprets.
    (void)pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
    std::shared_ptr<Regex> r(new Regex());
    r->code_ = code;
    return std::shared_ptr<const Regex>(std::move(r));
}

Regex::~Regex() { pcre2_code_free(as_code(code_)); }

void Regex::find_in_valid(std::string_view s, size_t base, std::vector<std::pair<size_t, size_t>>& out) const {
    pcre2_match_data* md = pcre2_match_data_create_from_pattern(as_code(code_), nullptr);
    if (!md) return;
    const auto* subject = reinterpret_cast<PCRE2_SPTR>(s.data());
    size_t start = 0;
    while (start < s.size()) {
        // The run was validated by the caller, so PCRE2 need not rescan it on every call
        // (which would make a long text quadratic).
        const int rc = pcre2_match(as_code(code_), subject, s.size(), start, PCRE2_NO_UTF_CHECK, md, nullptr);
        if (rc < 0) break;
        const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
        const size_t b = ov[0], e = ov[1];
        if (e > b) {
            out.emplace_back(base + b, base + e);
            start = e;
        } else {
            // An empty match: step over one character so that the scan always advances.
            start = b + utf8_len(s, b);
        }
    }
    pcre2_match_data_free(md);
}

void Regex::find_all(std::string_view s, std::vector<std::pair<size_t, size_t>>& out) const {
    size_t run = 0, i = 0;
    while (i < s.size()) {
        const size_t n = utf8_len(s, i);
        if (n == 1 && static_cast<uint8_t>(s[i]) >= 0x80) {
            if (i > run) find_in_valid(s.substr(run, i - run), run, out);
            run = i + 1;
        }
        i += n;
    }
    if (s.size() > run) find_in_valid(s.substr(run), run, out);
}

void Regex::split(std::string_view s, SplitBehavior behavior, bool invert, std::vector<std::string_view>& out) const {
    std::vector<std::pair<size_t, size_t>> m;
    find_all(s, m);
    // The whole string as alternating (range, is_match) parts, as HF builds it.
    struct Part {
        size_t b, e;
        bool match;
    };
    std::vector<Part> parts;
    size_t pos = 0;
    for (auto [b, e] : m) {
        if (b > pos) parts.push_back({pos, b, invert});
        parts.push_back({b, e, !invert});
        pos = e;
    }
    if (pos < s.size()) parts.push_back({pos, s.size(), invert});

    std::vector<Part> res;
    switch (behavior) {
        case SplitBehavior::Isolated: res = parts; break;
        case SplitBehavior::Removed:
            for (auto& p : parts)
                if (!p.match) res.push_back(p);
            break;
        case SplitBehavior::MergedWithPrevious: {
            bool prev = false;
            for (auto& p : parts) {
                if (p.match && !prev && !res.empty())
                    res.back().e = p.e;
                else
                    res.push_back(p);
                prev = p.match;
            }
            break;
        }
        case SplitBehavior::MergedWithNext: {
            bool prev = false;
            for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
                if (it->match && !prev && !res.empty())
                    res.back().b = it->b;
                else
                    res.push_back(*it);
                prev = it->match;
            }
            std::reverse(res.begin(), res.end());
            break;
        }
        case SplitBehavior::Contiguous: {
            bool prev = false;
            for (size_t k = 0; k < parts.size(); ++k) {
                if (k > 0 && parts[k].match == prev)
                    res.back().e = parts[k].e;
                else
                    res.push_back(parts[k]);
                prev = parts[k].match;
            }
            break;
        }
    }
    for (auto& p : res)
        if (p.e > p.b) out.push_back(s.substr(p.b, p.e - p.b));
}

}  // namespace edge::tokenizer
