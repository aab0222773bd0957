#include "perplexity.h"

#include <cmath>

#include "engine/runtime/one_sequence.h"

using edge::tokenizer::Tokenizer;

namespace edge::validate {

Result<PplProtocol> parse_ppl_protocol(std::string_view name) {
    if (name == "story") return PplProtocol::Story;
    if (name == "para") return PplProtocol::Para;
    if (name == "stream") return PplProtocol::Stream;
    return err("unknown perplexity protocol '", std::string(name), "' (expected story, para or stream)");
}

const char* ppl_protocol_name(PplProtocol p) {
    switch (p) {
        case PplProtocol::Story: return "story";
        case PplProtocol::Para: return "para";
        case PplProtocol::Stream: return "stream";
    }
    return "?";
}

namespace {

std::string_view strip(std::string_view s) {
    auto ws = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; };
    while (!s.empty() && ws(s.front())) s.remove_prefix(1);
    while (!s.empty() && ws(s.back())) s.remove_suffix(1);
    return s;
}

std::vector<std::string_view> split(std::string_view text, std::string_view sep) {
    std::vector<std::string_view> out;
    size_t start = 0;
    for (;;) {
        const size_t at = text.find(sep, start);
        if (at == std::string_view::npos) {
            out.push_back(text.substr(start));
            return out;
        }
        out.push_back(text.substr(start, at - start));
        start = at + sep.size();
    }
}

}  // namespace

Result<std::vector<std::vector<int32_t>>> ppl_sequences(const Tokenizer& tok, std::string_view text,
                                                        const PplOptions& opts) {
    if (opts.max_tokens < 2) return err("perplexity needs at least 2 tokens per part, got ", opts.max_tokens);
    if (tok.bos_id() < 0) return err("the tokenizer has no BOS token; perplexity protocols need one");
    std::vector<std::vector<int32_t>> seqs;
    const auto limit = [&] { return opts.max_parts >= 0 && int(seqs.size()) >= opts.max_parts; };
    if (opts.protocol == PplProtocol::Stream) {
        const int32_t nl = tok.byte_token('\n');
        if (nl < 0) return err("the tokenizer has no byte token for '\\n', needed by the stream protocol");
        std::vector<int32_t> all;
        bool first = true;
        for (std::string_view line : split(text, "\n")) {
            line = strip(line);
            if (line.empty()) continue;
            if (!first) all.push_back(nl);
            first = false;
            const auto ids = tok.encode(line, false);
            all.insert(all.end(), ids.begin(), ids.end());
        }
        const size_t win = size_t(opts.max_tokens - 1);
        for (size_t at = 0; at < all.size() && !limit(); at += win) {
            std::vector<int32_t> s{tok.bos_id()};
            s.insert(s.end(), all.begin() + long(at), all.begin() + long(std::min(all.size(), at + win)));
            seqs.push_back(std::move(s));
        }
    } else {
        const std::string_view sep = opts.protocol == PplProtocol::Story ? "<|endoftext|>" : "\n\n";
        for (std::string_view part : split(text, sep)) {
            if (limit()) break;
            part = strip(part);
            if (part.empty()) continue;
            auto ids = tok.encode(part, true);
            if (ids.empty() || ids[0] != tok.bos_id()) ids.insert(ids.begin(), tok.bos_id());
            if (ids.size() > size_t(opts.max_tokens)) ids.resize(size_t(opts.max_tokens));
            if (ids.size() >= 2) seqs.push_back(std::move(ids));
        }
    }
    return seqs;
}

Result<std::string> ppl_scored_text(const Tokenizer& tok, std::string_view text, const PplOptions& opts) {
    if (opts.max_tokens < 2) return err("perplexity needs at least 2 tokens per part, got ", opts.max_tokens);
    std::string out;
    auto add = [&](std::string_view part) {
        if (!out.empty()) out += "\n\n";
        out.append(part.data(), part.size());
    };
    if (opts.protocol == PplProtocol::Stream) {
        // Lines until the scored windows are full (each window holds max_tokens - 1 tokens).
        const int64_t budget = opts.max_parts < 0 ? -1 : int64_t(opts.max_parts) * (opts.max_tokens - 1);
        int64_t used = 0;
        for (std::string_view line : split(text, "\n")) {
            if (budget >= 0 && used >= budget) break;
            line = strip(line);
            if (line.empty()) continue;
            used += int64_t(tok.encode(line, false).size()) + 1;  // + the '\n' token joining lines
            add(line);
        }
        return out;
    }
    const std::string_view sep = opts.protocol == PplProtocol::Story ? "<|endoftext|>" : "\n\n";
    int parts = 0;
    for (std::string_view part : split(text, sep)) {
        if (opts.max_parts >= 0 && parts >= opts.max_parts) break;
        part = strip(part);
        if (part.empty()) continue;
        const auto ids = tok.encode(part, true);  // as ppl_sequences: a part of BOS alone is not scored
        if (ids.size() + (ids.empty() || ids[0] != tok.bos_id() ? 1 : 0) < 2) continue;
        ++parts;
        add(part);
    }
    return out;
}

double token_nll(const float* logits, int n, int32_t target) {
    double mx = logits[0];
    for (int i = 1; i < n; ++i) mx = std::max(mx, double(logits[i]));
    double sum = 0.0;
    for (int i = 0; i < n; ++i) sum += std::exp(double(logits[i]) - mx);
    return std::log(sum) + mx - double(logits[target]);
}

Result<PplResult> evaluate_perplexity(runtime::Executor& rt, const Tokenizer& tok, std::string_view text,
                                      const PplOptions& opts, Progress* progress) {
    if (tok.vocab_size() != rt.config().vocab_size)
        return err("tokenizer vocabulary (", tok.vocab_size(), ") does not match the model's (", rt.config().vocab_size,
                   ")");
    auto scorer = runtime::Scorer::create(rt, opts.max_tokens);
    if (!scorer) return scorer.error();
    PplOptions o = opts;
    o.max_tokens = std::min(o.max_tokens, scorer->max_seq());
    auto seqs = ppl_sequences(tok, text, o);
    if (!seqs) return seqs.error();
    if (seqs->empty()) return err("the text has nothing to score (no non-empty part)");
    const int V = rt.config().vocab_size;
    PplResult r;
    int64_t total_tokens = 0;
    for (const auto& s : *seqs) total_tokens += int64_t(s.size()) - 1;
    for (const auto& s : *seqs) {
        if (is_cancelled(progress)) return err("perplexity evaluation cancelled");
        const int n = int(s.size());
        auto logits = scorer->score(s);
        if (!logits) return logits.error();
        for (int i = 0; i + 1 < n; ++i) r.nll_sum += token_nll(*logits + size_t(i) * V, V, s[size_t(i) + 1]);
        r.tokens += n - 1;
        r.parts += 1;
        report(progress, double(r.tokens) / double(total_tokens), "scoring");
    }
    r.perplexity = std::exp(r.nll_sum / double(r.tokens));
    return r;
}

}  // namespace edge::validate
