#include "engine/calib/select_text.h"

namespace edge::calib {

Result<TextSelection> select_paragraphs(const std::shared_ptr<const model::Model>& model,
                                        const tokenizer::Tokenizer& tok, const std::vector<std::string>& pool,
                                        const TextSelectOptions& opts, const std::string& where,
                                        const Progress* progress) {
    if (pool.empty()) return Error{where + ": the calibration pool is empty (no non-blank paragraph)"};
    if (opts.select.n > int64_t(pool.size()))
        return Error{where + ": " + std::to_string(opts.select.n) + " samples asked for, but the pool holds only " +
                     std::to_string(pool.size()) + " paragraphs (ask for at most " + std::to_string(pool.size()) +
                     " or give a larger pool)"};
    auto emb = llm_embeddings(model, tok, pool, opts.embed, progress);
    if (!emb) return Error{where + ": " + emb.message()};
    SelectOptions so = opts.select;
    if (opts.hardware_weights) {
        HardwareProfile hw = opts.hardware;
        if (hw.preferred_tokens <= 0) hw.preferred_tokens = opts.embed.max_tokens;
        std::vector<SampleShape> shapes(pool.size());
        for (size_t i = 0; i < pool.size(); ++i) shapes[i].tokens = emb->tokens[i];
        auto w = hardware_weights(shapes, hw);
        if (!w) return w.error();
        so.weights = std::move(w->weight);
    }
    auto sel = select_samples(emb->emb, so, progress);
    if (!sel) return Error{where + ": " + sel.message()};
    TextSelection out;
    out.pool_size = int64_t(pool.size());
    out.embed_dim = emb->emb.dim;
    for (int64_t i : sel->indices) {
        out.chosen.push_back(pool[size_t(i)]);
        out.tokens.push_back(emb->tokens[size_t(i)]);
        out.stream_tokens += emb->tokens[size_t(i)] - 1;
    }
    out.selection = std::move(sel).value();
    return out;
}

}  // namespace edge::calib
