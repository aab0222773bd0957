#include "engine/tokenizer/bpe_trainer.h"

#include <algorithm>
#include <queue>
#include <unordered_map>

#include "engine/tokenizer/pipeline.h"
#include "engine/tokenizer/regex_split.h"
#include "engine/tokenizer/text_util.h"

namespace edge::tokenizer {
namespace {

using tokenizer::kSpaceMark;

uint64_t pair_key(int32_t a, int32_t b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
}

struct Merge {
    int32_t a, b, result;
};

// Pair-frequency BPE over distinct words. Symbol -1 is a barrier (a character left to byte
// fallback): no pair forms across it. Pair counts are kept incrementally: a merge only
// revisits the words that contain the pair, and a lazy max-heap finds the next best pair.
class Trainer {
public:
    std::vector<std::string> pieces;  // symbol id -> text
    std::vector<Merge> merges;

    void add_word(std::vector<int32_t> syms, int64_t freq) { words_.push_back({std::move(syms), freq}); }

    void run(size_t max_pieces, int min_count) {
        for (size_t w = 0; w < words_.size(); ++w) count_word(w, +1);
        for (auto& [k, n] : counts_) heap_.push({n, k});
        while (pieces.size() < max_pieces && !heap_.empty()) {
            const auto [n, k] = heap_.top();
            heap_.pop();
            auto it = counts_.find(k);
            if (it == counts_.end() || it->second != n) continue;  // stale entry
            if (n < min_count) break;
            const auto a = static_cast<int32_t>(k >> 32), b = static_cast<int32_t>(k & 0xFFFFFFFFu);
            const std::string text = pieces[a] + pieces[b];
            auto found = by_text_.find(text);
            int32_t id;
            if (found != by_text_.end()) {
                id = found->second;  // the same string was already built from another split
            } else {
                id = static_cast<int32_t>(pieces.size());
                pieces.push_back(text);
                by_text_.emplace(text, id);
            }
            merges.push_back({a, b, id});
            apply(k, a, b, id);
        }
    }

    void register_piece(int32_t id) { by_text_.emplace(pieces[id], id); }

private:
    struct Word {
        std::vector<int32_t> syms;
        int64_t freq;
    };

    void bump(uint64_t k, int64_t d) {
        auto& c = counts_[k];
        c += d;
        touched_.push_back(k);
    }

    void count_word(size_t w, int sign) {
        const auto& s = words_[w].syms;
        for (size_t i = 0; i + 1 < s.size(); ++i) {
            if (s[i] < 0 || s[i + 1] < 0) continue;
            const uint64_t k = pair_key(s[i], s[i + 1]);
            if (sign > 0) where_[k].push_back(static_cast<uint32_t>(w));
            auto& c = counts_[k];
            c += sign * words_[w].freq;
            touched_.push_back(k);
        }
    }

    void apply(uint64_t k, int32_t a, int32_t b, int32_t id) {
        touched_.clear();
        std::vector<uint32_t> list = std::move(where_[k]);
        where_.erase(k);
        ++stamp_;
        if (seen_.size() < words_.size()) seen_.resize(words_.size(), 0);
        for (uint32_t w : list) {
            if (seen_[w] == stamp_) continue;
            seen_[w] = stamp_;
            auto& s = words_[w].syms;
            bool has = false;
            for (size_t i = 0; i + 1 < s.size() && !has; ++i) has = s[i] == a && s[i + 1] == b;
            if (!has) continue;  // the index entry is stale
            count_word(w, -1);
            std::vector<int32_t> out;
            out.reserve(s.size());
            for (size_t i = 0; i < s.size(); ++i) {
                if (i + 1 < s.size() && s[i] == a && s[i + 1] == b) {
                    out.push_back(id);
                    ++i;
                } else {
                    out.push_back(s[i]);
                }
            }
            s = std::move(out);
            count_word(w, +1);
        }
        std::sort(touched_.begin(), touched_.end());
        touched_.erase(std::unique(touched_.begin(), touched_.end()), touched_.end());
        for (uint64_t t : touched_) {
            auto it = counts_.find(t);
            if (it == counts_.end()) continue;
            if (it->second <= 0)
                counts_.erase(it);
            else
                heap_.push({it->second, t});
        }
    }

    std::vector<Word> words_;
    std::unordered_map<uint64_t, int64_t> counts_;
    std::unordered_map<uint64_t, std::vector<uint32_t>> where_;
    std::unordered_map<std::string, int32_t> by_text_;
    std::priority_queue<std::pair<int64_t, uint64_t>> heap_;
    std::vector<uint64_t> touched_;
    std::vector<uint32_t> seen_;
    uint32_t stamp_ = 0;
};

// Words as encode() will see them: spaces as "▁", the dummy prefix, a word boundary before
// every "▁" and around every newline (pieces never span lines).
std::unordered_map<std::string, int64_t> sentencepiece_words(std::string_view text) {
    std::string s = std::string(kSpaceMark) + tokenizer::replace_all(text, " ", kSpaceMark);
    std::unordered_map<std::string, int64_t> words;
    size_t start = 0;
    auto flush = [&](size_t end) {
        if (end > start) ++words[s.substr(start, end - start)];
        start = end;
    };
    for (size_t i = 0; i < s.size();) {
        if (s.compare(i, kSpaceMark.size(), kSpaceMark) == 0) {
            flush(i);
            i += kSpaceMark.size();
        } else if (s[i] == '\n') {
            flush(i);
            flush(i + 1);
            i += 1;
        } else {
            i += tokenizer::utf8_len(s, i);
        }
    }
    flush(s.size());
    return words;
}

Result<TokenizerSpec> train_sentencepiece(std::string_view text, const BpeTrainOptions& o) {
    constexpr int kFixed = 3 + 256;
    if (o.vocab_size <= kFixed)
        return err("BPE trainer: vocab_size ", o.vocab_size, " leaves no room after the ", kFixed,
                   " control and byte tokens");
    const auto words = sentencepiece_words(text);
    // The alphabet: the most frequent characters, as many as the budget allows; the rest fall
    // back to bytes. Half the budget at most, so that merges get room too.
    std::unordered_map<std::string, int64_t> chars;
    for (auto& [w, f] : words)
        for (size_t i = 0; i < w.size();) {
            const size_t n = tokenizer::utf8_len(w, i);
            chars[w.substr(i, n)] += f;
            i += n;
        }
    std::vector<std::pair<int64_t, std::string>> order;
    order.reserve(chars.size());
    for (auto& [ch, f] : chars) order.emplace_back(-f, ch);
    std::sort(order.begin(), order.end());
    const size_t budget = static_cast<size_t>(o.vocab_size - kFixed);
    const size_t n_chars = std::min(order.size(), std::max<size_t>(budget / 2, 1));
    Trainer t;
    std::unordered_map<std::string, int32_t> char_id;
    for (size_t i = 0; i < n_chars; ++i) {
        char_id.emplace(order[i].second, static_cast<int32_t>(i));
        t.pieces.push_back(order[i].second);
        t.register_piece(static_cast<int32_t>(i));
    }
    // Sorted for a deterministic result (unordered_map order is not).
    std::vector<std::pair<std::string, int64_t>> sorted(words.begin(), words.end());
    std::sort(sorted.begin(), sorted.end());
    for (auto& [w, f] : sorted) {
        std::vector<int32_t> syms;
        for (size_t i = 0; i < w.size();) {
            const size_t n = tokenizer::utf8_len(w, i);
            auto it = char_id.find(w.substr(i, n));
            syms.push_back(it == char_id.end() ? -1 : it->second);
            i += n;
        }
        t.add_word(std::move(syms), f);
    }
    t.run(budget, o.min_pair_count);

    TokenizerSpec spec;
    spec.model = "llama";
    spec.source = "BPE trainer";
    spec.unk_id = 0;
    spec.bos_id = 1;
    spec.eos_id = 2;
    spec.add_bos = true;
    spec.add_space_prefix = true;
    auto push = [&](std::string s, float score, int32_t type) {
        spec.tokens.push_back(std::move(s));
        spec.scores.push_back(score);
        spec.token_types.push_back(type);
    };
    push("<unk>", 0, tokenizer::kTypeUnknown);
    push("<s>", 0, tokenizer::kTypeControl);
    push("</s>", 0, tokenizer::kTypeControl);
    for (int b = 0; b < 256; ++b) push(tokenizer::byte_token_name(static_cast<uint8_t>(b)), 0, tokenizer::kTypeByte);
    // Learned pieces in creation order, score -k, then the characters below them.
    float score = 0;
    for (size_t i = n_chars; i < t.pieces.size(); ++i) push(t.pieces[i], -(score++), tokenizer::kTypeNormal);
    for (size_t i = 0; i < n_chars; ++i) push(t.pieces[i], -(score++), tokenizer::kTypeNormal);
    return spec;
}

Result<TokenizerSpec> train_byte_level(std::string_view text, const BpeTrainOptions& o) {
    if (o.vocab_size <= 257)
        return err("BPE trainer: vocab_size ", o.vocab_size, " leaves no room after 256 bytes + <|endoftext|>");
    auto re = tokenizer::Regex::compile(tokenizer::kGpt2Pattern, false, "BPE trainer");
    if (!re) return re.error();
    std::vector<std::string_view> parts;
    (*re)->split(text, tokenizer::SplitBehavior::Isolated, false, parts);
    std::unordered_map<std::string_view, int64_t> words;
    for (auto p : parts) ++words[p];
    std::vector<std::pair<std::string_view, int64_t>> sorted(words.begin(), words.end());
    std::sort(sorted.begin(), sorted.end());

    Trainer t;
    for (int b = 0; b < 256; ++b) {
        t.pieces.emplace_back(1, static_cast<char>(b));
        t.register_piece(b);
    }
    for (auto& [w, f] : sorted) {
        std::vector<int32_t> syms;
        for (char ch : w) syms.push_back(static_cast<uint8_t>(ch));
        t.add_word(std::move(syms), f);
    }
    t.run(static_cast<size_t>(o.vocab_size - 1), o.min_pair_count);

    TokenizerSpec spec;
    spec.model = "gpt2";
    spec.pre = "gpt2";
    spec.source = "BPE trainer";
    for (auto& p : t.pieces) {
        spec.tokens.push_back(tokenizer::bytes_to_unicode(p));
        spec.token_types.push_back(tokenizer::kTypeNormal);
    }
    for (auto& m : t.merges) spec.merges.push_back(spec.tokens[m.a] + " " + spec.tokens[m.b]);
    spec.tokens.push_back("<|endoftext|>");
    spec.token_types.push_back(tokenizer::kTypeControl);
    spec.bos_id = spec.eos_id = static_cast<int>(spec.tokens.size()) - 1;
    spec.add_bos = false;
    spec.add_space_prefix = false;
    return spec;
}

}  // namespace

Result<TokenizerSpec> train_bpe(std::string_view text, const BpeTrainOptions& options) {
    if (text.empty()) return err("BPE trainer: the training text is empty");
    return options.byte_level ? train_byte_level(text, options) : train_sentencepiece(text, options);
}

}  // namespace edge::tokenizer
