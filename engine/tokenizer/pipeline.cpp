#include "engine/tokenizer/pipeline.h"

#include <algorithm>
#include <queue>
#include <string_view>
#include <unordered_map>

#include "engine/tokenizer/text_util.h"

namespace edge::tokenizer {
namespace {

struct SvHash {
    using is_transparent = void;  // NOLINT(readability-identifier-naming): the name std::unordered_map looks up
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using PieceMap = std::unordered_map<std::string, int32_t, SvHash, std::equal_to<>>;

struct Symbol {
    uint32_t start, len;
    int32_t prev, next;
    int32_t id;
    bool fixed;  // byte-fallback / unknown symbols never merge (SentencePiece rule)
};

struct Candidate {
    double prio;   // higher merges first
    uint32_t pos;  // ties: leftmost first
    int32_t left, right;
    uint32_t len;
    int32_t id;
    bool operator<(const Candidate& o) const { return prio < o.prio || (prio == o.prio && pos > o.pos); }
};

struct Word {
    std::string text;
    bool at_start;  // begins at offset 0 of the input (Metaspace prepend_scheme "first")
};

// Per-call scratch, so that encode() stays const and thread-safe.
struct Scratch {
    std::vector<Symbol> syms;
    std::vector<Candidate> heap;
    std::vector<std::string_view> parts;
};

class PipelineTokenizer final : public Tokenizer {
public:
    explicit PipelineTokenizer(PipelineConfig cfg) : c_(std::move(cfg)) {
        const auto n = static_cast<int32_t>(c_.tokens.size());
        for (int32_t i = 0; i < n; ++i) {
            const int32_t t = c_.types[i];
            // Only ordinary pieces are reachable by character lookup and merging; control,
            // byte and user-defined tokens are reached by their own paths.
            if (t == kTypeNormal || t == kTypeUndefined) pieces_.emplace(c_.tokens[i], i);
        }
        for (size_t r = 0; r < c_.merges.size(); ++r) {
            auto [a, b] = c_.merges[r];
            auto it = pieces_.find(c_.tokens[a] + c_.tokens[b]);
            if (it == pieces_.end()) continue;
            pair_rank_.emplace(key(a, b), std::make_pair(static_cast<int32_t>(r), it->second));
        }
        for (int32_t id : c_.specials)
            if (!c_.tokens[id].empty()) special_by_byte_[static_cast<uint8_t>(c_.tokens[id][0])].push_back(id);
        for (auto& v : special_by_byte_)
            std::stable_sort(v.begin(), v.end(),
                             [&](int32_t a, int32_t b) { return c_.tokens[a].size() > c_.tokens[b].size(); });
    }

    std::vector<int32_t> encode(std::string_view text, bool add_bos) const override {
        std::vector<int32_t> out;
        out.reserve(text.size() / 3 + 2);
        if (add_bos && c_.bos_id >= 0) out.push_back(c_.bos_id);
        Scratch scratch;
        size_t seg = 0;
        for (size_t i = 0; i < text.size();) {
            const auto& cands = special_by_byte_[static_cast<uint8_t>(text[i])];
            int32_t hit = -1;
            for (int32_t id : cands)
                if (text.substr(i, c_.tokens[id].size()) == c_.tokens[id]) {
                    hit = id;
                    break;
                }
            if (hit < 0) {
                ++i;
                continue;
            }
            encode_segment(text.substr(seg, i - seg), seg == 0, out, scratch);
            out.push_back(hit);
            i += c_.tokens[hit].size();
            seg = i;
        }
        encode_segment(text.substr(seg), seg == 0, out, scratch);
        return out;
    }

    std::string piece(int32_t id, int32_t prev) const override {
        if (id < 0 || id >= vocab_size()) return {};
        if (c_.types[id] == kTypeControl) return {};
        const std::string& s = c_.raw[id];
        if (c_.strip_first_space && (prev < 0 || prev == c_.bos_id) && !s.empty() && s[0] == ' ') return s.substr(1);
        return s;
    }

    int vocab_size() const override { return static_cast<int>(c_.tokens.size()); }
    int bos_id() const override { return c_.bos_id; }
    int eos_id() const override { return c_.eos_id; }
    int32_t byte_token(uint8_t b) const override { return c_.byte_ids[b]; }
    std::string token_text(int32_t id) const override {
        return (id < 0 || id >= vocab_size()) ? std::string() : c_.display[id];
    }
    std::vector<std::string> notes() const override { return c_.notes; }

private:
    static uint64_t key(int32_t a, int32_t b) {
        return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
    }

    int32_t lookup(std::string_view s) const {
        auto it = pieces_.find(s);
        return it == pieces_.end() ? -1 : it->second;
    }

    std::string normalize(std::string_view seg, bool at_start) const {
        std::string s(seg);
        for (const auto& n : c_.normalizers) {
            if (n.kind == NormStep::Prepend) {
                // HF's Prepend leaves an empty string alone; so does llama2.c's dummy prefix.
                if (!s.empty() && (!n.first_only || at_start)) s.insert(0, n.text);
            } else if (n.regex) {
                std::vector<std::pair<size_t, size_t>> m;
                n.regex->find_all(s, m);
                std::string r;
                size_t pos = 0;
                for (auto [b, e] : m) {
                    r.append(s, pos, b - pos);
                    r += n.with;
                    pos = e;
                }
                r.append(s, pos, std::string::npos);
                s = std::move(r);
            } else if (!n.text.empty()) {
                s = replace_all(s, n.text, n.with);
            }
        }
        return s;
    }

    void pre_tokenize(std::vector<Word>& words, Scratch& sc) const {
        for (const auto& p : c_.pre) {
            std::vector<Word> next;
            next.reserve(words.size());
            for (auto& w : words) {
                std::string s = std::move(w.text);
                if (p.kind == PreStep::Metaspace) {
                    s = replace_all(s, " ", p.replacement);
                    const bool want = p.scheme == PreStep::Always || (p.scheme == PreStep::First && w.at_start);
                    if (want && !s.starts_with(p.replacement)) s.insert(0, p.replacement);
                } else if (p.kind == PreStep::ByteLevel) {
                    if (p.add_prefix_space && !s.starts_with(' ')) s.insert(0, 1, ' ');
                }
                sc.parts.clear();
                if (p.regex) {
                    const auto behavior =
                        p.kind == PreStep::Split
                            ? p.behavior
                            : (p.kind == PreStep::Metaspace ? SplitBehavior::MergedWithNext : SplitBehavior::Isolated);
                    if (p.kind != PreStep::Metaspace || p.split)
                        p.regex->split(s, behavior, p.kind == PreStep::Split && p.invert, sc.parts);
                    else
                        sc.parts.push_back(s);
                } else {
                    sc.parts.push_back(s);
                }
                bool first = w.at_start;
                for (auto part : sc.parts) {
                    std::string t = p.kind == PreStep::ByteLevel ? bytes_to_unicode(part) : std::string(part);
                    next.push_back({std::move(t), first});
                    first = false;
                }
            }
            words = std::move(next);
        }
    }

    void encode_segment(std::string_view seg, bool at_start, std::vector<int32_t>& out, Scratch& sc) const {
        if (seg.empty()) return;
        std::vector<Word> words;
        words.push_back({normalize(seg, at_start), at_start});
        pre_tokenize(words, sc);
        for (const auto& w : words) encode_word(w.text, out, sc);
    }

    void push_candidate(std::string_view w, int32_t l, int32_t r, Scratch& sc) const {
        if (l < 0 || r < 0) return;
        const Symbol& a = sc.syms[l];
        const Symbol& b = sc.syms[r];
        if (a.fixed || b.fixed || a.start + a.len != b.start) return;
        Candidate c{0.0, a.start, l, r, a.len + b.len, -1};
        if (c_.mode == MergeMode::Score) {
            c.id = lookup(w.substr(a.start, c.len));
            if (c.id < 0) return;
            c.prio = c_.scores[c.id];
        } else {
            auto it = pair_rank_.find(key(a.id, b.id));
            if (it == pair_rank_.end()) return;
            c.prio = -static_cast<double>(it->second.first);
            c.id = it->second.second;
        }
        sc.heap.push_back(c);
        std::push_heap(sc.heap.begin(), sc.heap.end());
    }

    void encode_word(std::string_view w, std::vector<int32_t>& out, Scratch& sc) const {
        if (w.empty()) return;
        if (c_.ignore_merges) {
            const int32_t id = lookup(w);
            if (id >= 0) {
                out.push_back(id);
                return;
            }
        }
        auto& syms = sc.syms;
        syms.clear();
        sc.heap.clear();
        auto add = [&](uint32_t start, uint32_t len, int32_t id, bool fixed) {
            const auto idx = static_cast<int32_t>(syms.size());
            syms.push_back({start, len, idx - 1, -1, id, fixed});
            if (idx > 0) syms[idx - 1].next = idx;
        };
        for (size_t i = 0; i < w.size();) {
            const size_t n = utf8_len(w, i);
            const int32_t id = lookup(w.substr(i, n));
            if (id >= 0) {
                add(static_cast<uint32_t>(i), static_cast<uint32_t>(n), id, false);
            } else {
                bool bytes_ok = c_.byte_fallback;
                for (size_t k = 0; bytes_ok && k < n; ++k) bytes_ok = c_.byte_ids[static_cast<uint8_t>(w[i + k])] >= 0;
                if (bytes_ok) {
                    for (size_t k = 0; k < n; ++k)
                        add(static_cast<uint32_t>(i + k), 1, c_.byte_ids[static_cast<uint8_t>(w[i + k])], true);
                } else if (c_.unk_id >= 0) {
                    if (c_.fuse_unk && !syms.empty() && syms.back().fixed && syms.back().id == c_.unk_id &&
                        syms.back().start + syms.back().len == i)
                        syms.back().len += static_cast<uint32_t>(n);
                    else
                        add(static_cast<uint32_t>(i), static_cast<uint32_t>(n), c_.unk_id, true);
                }
                // No byte token and no <unk>: the character cannot be represented; dropping it
                // is what the reference implementations do too.
            }
            i += n;
        }
        if (syms.empty()) return;
        for (int32_t k = 0; k + 1 < static_cast<int32_t>(syms.size()); ++k) push_candidate(w, k, k + 1, sc);
        while (!sc.heap.empty()) {
            std::pop_heap(sc.heap.begin(), sc.heap.end());
            const Candidate c = sc.heap.back();
            sc.heap.pop_back();
            Symbol& a = syms[c.left];
            // Stale entries (one side already merged elsewhere) are recognised by a changed
            // length or neighbour; symbols only ever grow to the right.
            if (a.len == 0 || a.next != c.right || a.len + syms[c.right].len != c.len) continue;
            Symbol& b = syms[c.right];
            a.len = c.len;
            a.id = c.id;
            a.next = b.next;
            if (b.next >= 0) syms[b.next].prev = c.left;
            b.len = 0;
            push_candidate(w, a.prev, c.left, sc);
            push_candidate(w, c.left, syms[c.left].next, sc);
        }
        for (int32_t k = 0; k >= 0; k = syms[k].next) out.push_back(syms[k].id);
    }

    PipelineConfig c_;
    PieceMap pieces_;
    std::unordered_map<uint64_t, std::pair<int32_t, int32_t>> pair_rank_;
    std::array<std::vector<int32_t>, 256> special_by_byte_;
};

}  // namespace

Result<std::unique_ptr<Tokenizer>> build_pipeline(PipelineConfig cfg) {
    const size_t n = cfg.tokens.size();
    const std::string& src = cfg.source;
    if (n == 0) return err(src, ": the vocabulary is empty");
    if (n > static_cast<size_t>(INT32_MAX)) return err(src, ": vocabulary too large");
    if (cfg.display.empty()) cfg.display = cfg.tokens;
    if (cfg.scores.empty()) cfg.scores.assign(n, 0.0f);
    if (cfg.types.empty()) cfg.types.assign(n, kTypeNormal);
    if (cfg.display.size() != n || cfg.raw.size() != n || cfg.scores.size() != n || cfg.types.size() != n)
        return err(src, ": vocabulary arrays disagree in length (", n, " tokens, ", cfg.scores.size(), " scores, ",
                   cfg.types.size(), " types)");
    auto in_range = [&](int32_t id) { return id >= 0 && static_cast<size_t>(id) < n; };
    for (int32_t* id : {&cfg.unk_id, &cfg.bos_id, &cfg.eos_id})
        if (*id >= 0 && !in_range(*id))
            return err(src, ": special token id ", *id, " is outside the vocabulary of ", n);
    for (size_t r = 0; r < cfg.merges.size(); ++r)
        if (!in_range(cfg.merges[r].first) || !in_range(cfg.merges[r].second))
            return err(src, ": merge ", r, " refers to a token outside the vocabulary");
    for (int32_t id : cfg.specials)
        if (!in_range(id)) return err(src, ": special token id ", id, " is out of range");
    for (int32_t b : cfg.byte_ids)
        if (b >= 0 && !in_range(b)) return err(src, ": byte token id ", b, " is out of range");
    std::unique_ptr<Tokenizer> t = std::make_unique<PipelineTokenizer>(std::move(cfg));
    return t;
}

}  // namespace edge::tokenizer
