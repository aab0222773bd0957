#include "test_helpers.h"

#include <QFileInfo>
#include <QThread>

#include "test_support.h"

namespace edge::views::test {

edge::model::Model tinyModel(int blocks, int dim, const std::string& name) {
    edge::model::Model m;
    m.name = name;
    m.source_format = "synth";
    m.source_path = "/tmp/" + name + ".gguf";
    edge::model::LlamaConfig& c = m.config;
    c.dim = dim;
    c.hidden_dim = dim * 2;
    c.n_layers = blocks;
    c.n_heads = 2;
    c.n_kv_heads = 2;
    c.head_dim = dim / 2;
    c.rope_dim = dim / 2;
    c.vocab_size = 16;
    c.context_length = 32;
    c.tied_embeddings = true;
    m.tensors.push_back(edge::Tensor::zeros_f32("token_embd.weight", {c.vocab_size, dim}));
    m.tensors.push_back(edge::Tensor::zeros_f32("output_norm.weight", {dim}));
    for (int b = 0; b < blocks; ++b) {
        const std::string p = "blk." + std::to_string(b) + ".";
        m.tensors.push_back(edge::Tensor::zeros_f32(p + "attn_norm.weight", {dim}));
        m.tensors.push_back(edge::Tensor::zeros_f32(p + "attn_q.weight", {c.q_dim(), dim}));
        m.tensors.push_back(edge::Tensor::zeros_f32(p + "attn_k.weight", {c.kv_dim(), dim}));
        m.tensors.push_back(edge::Tensor::zeros_f32(p + "attn_v.weight", {c.kv_dim(), dim}));
        m.tensors.push_back(edge::Tensor::zeros_f32(p + "attn_output.weight", {dim, c.q_dim()}));
        m.tensors.push_back(edge::Tensor::zeros_f32(p + "ffn_norm.weight", {dim}));
        m.tensors.push_back(edge::Tensor::zeros_f32(p + "ffn_gate.weight", {c.hidden_dim, dim}));
        m.tensors.push_back(edge::Tensor::zeros_f32(p + "ffn_up.weight", {c.hidden_dim, dim}));
        m.tensors.push_back(edge::Tensor::zeros_f32(p + "ffn_down.weight", {dim, c.hidden_dim}));
    }
    edge::model::finalize_llama(m);
    return m;
}

QString stories260kPath() { return QString::fromStdString(edge::test::shared("models/stories260K/stories260K.gguf")); }

QString realModelPath() {
#ifdef EDGE_HAVE_DEMO_MODEL
    QString demo = QString::fromStdString(edge::test::build_dir() + "/resources/demo/demo.gguf");
    if (QFileInfo::exists(demo)) return demo;
#endif
    return stories260kPath();
}

bool waitUntil(const std::function<bool()>& done, int timeoutMs) {
    QDeadlineTimer deadline(timeoutMs);
    while (!done() && !deadline.hasExpired()) {
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
        QThread::msleep(2);
    }
    return done();
}

}  // namespace edge::views::test
