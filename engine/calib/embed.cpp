#include "engine/calib/embed.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "engine/model/cnn_ir.h"
#include "engine/runtime/cnn/cnn.h"
#include "engine/runtime/cpu/llama_cpu.h"
#include "engine/runtime/one_sequence.h"

using edge::model::is_cnn;
using edge::model::Model;
using edge::model::Op;
using edge::model::OpType;
using edge::runtime::Activation;
using edge::runtime::CnnExecutor;
using edge::runtime::LlamaCpu;
using edge::runtime::RuntimeOptions;
using edge::tokenizer::Tokenizer;

namespace edge::calib {

std::vector<std::string> split_paragraphs(std::string_view text) {
    std::vector<std::string> out;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find("\n\n", pos);
        if (end == std::string_view::npos) end = text.size();
        std::string_view part = text.substr(pos, end - pos);
        pos = end + 2;
        while (!part.empty() && std::isspace(static_cast<unsigned char>(part.front()))) part.remove_prefix(1);
        while (!part.empty() && std::isspace(static_cast<unsigned char>(part.back()))) part.remove_suffix(1);
        if (!part.empty()) out.emplace_back(part);
    }
    return out;
}

std::string join_paragraphs(const std::vector<std::string>& samples) {
    std::string out;
    for (const auto& s : samples) {
        out += s;
        out += "\n\n";
    }
    return out;
}

Result<LlmPoolEmbeddings> llm_embeddings(const std::shared_ptr<const Model>& model, const Tokenizer& tok,
                                         const std::vector<std::string>& samples, const LlmEmbedOptions& opts,
                                         const Progress* progress) {
    if (samples.empty()) return err("the calibration pool is empty: no paragraph to embed");
    if (opts.max_tokens < 2) return err("embedding needs at least 2 tokens per sample (got ", opts.max_tokens, ")");
    const std::string src = model->source_path.empty() ? model->name : model->source_path;
    RuntimeOptions ro;
    ro.threads = opts.threads;
    ro.max_seq = opts.max_tokens;
    auto rt = LlamaCpu::create(model, ro);
    if (!rt) return err(src, ": ", rt.message());
    const int dim = model->config.dim;
    LlmPoolEmbeddings out;
    out.emb.n = int64_t(samples.size());
    out.emb.dim = dim;
    out.emb.data.assign(samples.size() * size_t(dim), 0.0f);
    out.tokens.resize(samples.size());
    // The head's input for every token of the prefill (all_logits makes the executor run the head
    // on every position, and the hook sees the normed hidden states first).
    std::vector<double> acc(static_cast<size_t>(dim));
    int pooled = 0;
    (*rt)->set_linear_hook([&](int block, std::string_view kind, const float* in, int n, int in_dim) {
        if (block != -1 || kind != "output" || in_dim != dim) return;
        // Skip position 0 (BOS): its state is the same for every sample.
        for (int t = 1; t < n; ++t)
            for (int j = 0; j < dim; ++j) acc[size_t(j)] += double(in[size_t(t) * size_t(dim) + size_t(j)]);
        pooled += std::max(0, n - 1);
    });
    auto seq = runtime::OneSequence::create(**rt, opts.max_tokens);
    if (!seq) return err(src, ": ", seq.message());
    for (size_t i = 0; i < samples.size(); ++i) {
        if (is_cancelled(progress)) return err("embedding cancelled");
        auto ids = tok.encode(samples[i], true);
        out.tokens[i] = int(ids.size());
        if (ids.size() < 2) return err("calibration pool sample ", i, " encodes to no token besides BOS");
        if (int(ids.size()) > opts.max_tokens) ids.resize(size_t(opts.max_tokens));
        std::fill(acc.begin(), acc.end(), 0.0);
        pooled = 0;
        seq->reset();
        if (auto r = seq->next(ids, true); !r) return err(src, ": sample ", i, ": ", r.message());
        if (pooled < 1) return err(src, ": the executor gave no hidden state for sample ", i);
        for (int j = 0; j < dim; ++j) out.emb.data[i * size_t(dim) + size_t(j)] = float(acc[size_t(j)] / pooled);
        if (i % 16 == 0) report(progress, double(i + 1) / double(samples.size()), "embedding the pool");
    }
    report(progress, 1.0, "embedding the pool");
    return out;
}

Result<Model> cnn_feature_model(const Model& cnn) {
    const std::string src = cnn.source_path.empty() ? cnn.name : cnn.source_path;
    if (!is_cnn(cnn)) return err(src, ": not a CNN model (architecture '", cnn.architecture, "')");
    int last = -1;
    for (int i = int(cnn.graph.ops.size()) - 1; i >= 0; --i) {
        const OpType t = cnn.graph.ops[size_t(i)].type;
        if (t == OpType::Linear || t == OpType::Conv2d || t == OpType::MatMul) {
            last = i;
            break;
        }
    }
    if (last < 0) return err(src, ": no Linear or Conv2d op, so no penultimate features");
    const Op& head = cnn.graph.ops[size_t(last)];
    if (head.inputs.empty() || head.inputs[0] == cnn.graph.inputs.at(0))
        return err(src, ": the last weighted op '", head.name, "' reads the graph input; there is no feature layer");
    Model m = cnn;  // tensors share their data
    m.graph.ops.resize(size_t(last));
    m.graph.outputs = {head.inputs[0]};
    return m;
}

Result<Embeddings> cnn_features(const Model& cnn, const std::vector<float>& pixels, int64_t count, int64_t batch,
                                int threads, const Progress* progress) {
    const std::string src = cnn.source_path.empty() ? cnn.name : cnn.source_path;
    if (count < 1) return err("the calibration pool is empty: no image to embed");
    auto fm = cnn_feature_model(cnn);
    if (!fm) return fm.error();
    auto exec = CnnExecutor::create(fm.value(), threads);
    if (!exec) return exec.error();
    const auto& shape = (*exec)->input_shape();
    const int64_t per = shape[1] * shape[2] * shape[3];
    if (int64_t(pixels.size()) != count * per)
        return err(src, ": the pool holds ", pixels.size(), " values for ", count, " images; the model takes ",
                   shape[1], "x", shape[2], "x", shape[3], " = ", per, " per image");
    batch = std::max<int64_t>(1, batch);
    Embeddings e;
    e.n = count;
    for (int64_t b = 0; b < count; b += batch) {
        if (is_cancelled(progress)) return err("feature extraction cancelled");
        const int64_t m = std::min(batch, count - b);
        Activation in;
        in.shape = {m, shape[1], shape[2], shape[3]};
        in.data.assign(pixels.begin() + b * per, pixels.begin() + (b + m) * per);
        auto out = (*exec)->run(in);
        if (!out) return out.error();
        const int64_t f = out->numel() / m;
        if (e.dim == 0) {
            e.dim = int(f);
            e.data.reserve(size_t(count * f));
        }
        e.data.insert(e.data.end(), out->data.begin(), out->data.end());
        report(progress, double(b + m) / double(count), "penultimate features");
    }
    return e;
}

}  // namespace edge::calib
