#include "bench_common.h"

#include <algorithm>

using edge::model::load_model;
using edge::model::Model;
using edge::runtime::LlamaCpu;
using edge::runtime::RuntimeOptions;
using edge::tokenizer::make_tokenizer;
using edge::validate::compare_models;
using edge::validate::measure_jitter;
using edge::validate::PplProtocol;

using namespace edge;

Result<BenchSetup> BenchSetup::create(const BenchArgs& a) {
    BenchSetup s;
    s.args = a;
    s.only = a.only;
    s.threads = a.threads;
    auto m = load_model(a.model_path);
    if (!m.ok()) return m.error();
    s.model = std::make_shared<const Model>(std::move(m).value());
    auto text = read_text_file(a.text_path);
    if (!text.ok()) return text.error();
    s.text = std::move(text).value();
    auto tok = make_tokenizer(s.model->tokenizer);
    if (!tok.ok()) return tok.error();
    s.tok = std::move(tok).value();
    size_t half = s.text.find("\n\n", s.text.size() / 2);
    if (half == std::string::npos) half = s.text.size() / 2;
    auto calib = quant::calib_from_text(*s.tok, std::string_view(s.text).substr(half), a.calib_seqs, a.calib_len);
    if (!calib.ok()) return err("calibration: ", calib.message());
    s.calib = std::move(calib).value();
    s.ppl.protocol = PplProtocol::Para;
    s.ppl.max_parts = a.parts;
    auto ref = LlamaCpu::create(s.model, RuntimeOptions{a.threads, 512});
    if (!ref.ok()) return ref.error();
    s.ref = std::move(ref).value();
    return s;
}

Result<BenchRow> BenchSetup::evaluate(const std::shared_ptr<const Model>& m, bool speed) {
    auto rt = LlamaCpu::create(m, RuntimeOptions{threads, 512});
    if (!rt.ok()) return rt.error();
    BenchRow r;
    auto cmp = compare_models(*ref, **rt, *tok, text, ppl);
    if (!cmp.ok()) return cmp.error();
    r.cmp = *cmp;
    if (speed) {
        auto j = measure_jitter(**rt, 256, 5);
        if (!j) return j.error();
        r.tokens_per_s = j->tokens_per_s;
    }
    return r;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}
