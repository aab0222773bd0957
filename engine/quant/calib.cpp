#include "calib.h"

#include <algorithm>

#include "engine/runtime/cpu/llama_cpu.h"
#include "engine/runtime/one_sequence.h"

using edge::model::Model;
using edge::runtime::LlamaCpu;
using edge::runtime::RuntimeOptions;
using edge::tokenizer::Tokenizer;

namespace edge::quant {

Result<CalibSet> calib_from_text(const Tokenizer& tok, std::string_view text, int n_seq, int seq_len) {
    if (n_seq <= 0 || seq_len < 2) return err("calibration needs at least one sequence of at least 2 tokens");
    std::vector<int32_t> stream;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find("\n\n", pos);
        if (end == std::string_view::npos) end = text.size();
        std::string_view part = text.substr(pos, end - pos);
        pos = end + 2;
        while (!part.empty() && std::isspace(static_cast<unsigned char>(part.front()))) part.remove_prefix(1);
        while (!part.empty() && std::isspace(static_cast<unsigned char>(part.back()))) part.remove_suffix(1);
        if (part.empty()) continue;
        const auto ids = tok.encode(part, false);
        stream.insert(stream.end(), ids.begin(), ids.end());
        if (stream.size() >= size_t(n_seq) * size_t(seq_len - 1)) break;
    }
    const size_t per = size_t(seq_len - 1);
    if (stream.size() < per)
        return err("the calibration text gives ", stream.size(), " tokens; at least ", per,
                   " are needed for one sequence of ", seq_len, " tokens",
                   stream.empty() ? " (the text is empty)" : "");
    CalibSet c;
    for (size_t s = 0; s + per <= stream.size() && int(c.sequences.size()) < n_seq; s += per) {
        std::vector<int32_t> seq{tok.bos_id() >= 0 ? tok.bos_id() : 1};
        seq.insert(seq.end(), stream.begin() + long(s), stream.begin() + long(s + per));
        c.sequences.push_back(std::move(seq));
    }
    if (int(c.sequences.size()) < n_seq)
        c.warning = "calibration text gives only " + std::to_string(c.sequences.size()) + " of the " +
                    std::to_string(n_seq) + " sequences asked for";
    return c;
}

std::string capture_key(std::string_view kind) {
    if (kind == "attn_q" || kind == "attn_k" || kind == "attn_v") return "attn";
    if (kind == "ffn_gate" || kind == "ffn_up") return "ffn";
    return std::string(kind);
}

Result<BlockInputs> capture_block_inputs(const std::shared_ptr<const Model>& m, const CalibSet& calib, int block,
                                         int threads, const Progress* progress) {
    if (calib.sequences.empty()) return err("no calibration sequences");
    int longest = 0;
    for (const auto& s : calib.sequences) longest = std::max(longest, int(s.size()));
    RuntimeOptions o;
    o.threads = threads;
    o.max_seq = longest;
    auto rt = LlamaCpu::create(m, o);
    if (!rt.ok()) return rt.error();
    BlockInputs out;
    (*rt)->set_linear_hook([&](int b, std::string_view kind, const float* in, int n, int dim) {
        if (b != block) return;
        const std::string key = capture_key(kind);
        if (key == "attn" && kind != "attn_q") return;  // the same input three times
        if (key == "ffn" && kind != "ffn_gate") return;
        Captured& c = out[key];
        c.dim = dim;
        c.x.insert(c.x.end(), in, in + int64_t(n) * dim);
        c.rows += n;
    });
    auto seq = runtime::OneSequence::create(**rt, longest);
    if (!seq) return seq.error();
    for (size_t i = 0; i < calib.sequences.size(); ++i) {
        if (is_cancelled(progress)) return err("calibration cancelled");
        seq->reset();
        // all_logits makes the executor run the output head on every token (its input is captured).
        if (auto r = seq->next(calib.sequences[i], block < 0); !r)
            return err("calibration sequence ", i, ": ", r.message());
    }
    return out;
}

}  // namespace edge::quant
