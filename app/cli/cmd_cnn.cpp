// CNN commands over engine/model (ONNX, ResNet-20 builder), engine/runtime (CnnExecutor) and
// engine/prune (folding):
//   classify MODEL --images IDX --labels IDX   top-1 accuracy on a labelled image set
//   fold MODEL                                 BatchNorm folding + linear merging: node counts
//                                              before/after and the largest output difference
//   cnn-quant MODEL --images IDX --labels IDX  INT8 (W8A8, integer kernels) / INT4 quantization
//                                              through a plan: top-1, agreement and KL vs FP32
// MODEL is an .onnx file, or a CIFAR ResNet-20 .safetensors checkpoint (conv1/bn1/layerN...).
// Also the CNN part of `info` (cnn_summary).
#include <CLI/CLI.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>

#include "app/cli/common.h"
#include "engine/calib/image_sets.h"
#include "engine/model/cnn_ir.h"
#include "engine/model/loader.h"
#include "engine/prune/fold.h"
#include "engine/quant/cnn_quant.h"
#include "engine/runtime/cnn/cnn.h"

using edge::model::build_resnet20_cifar;
using edge::model::cnn_input_shape;
using edge::model::count_nodes;
using edge::model::is_cnn;
using edge::model::load_model;
using edge::model::Model;
using edge::model::NodeCounts;
using edge::model::Op;
using edge::model::op_type_name;
using edge::model::shape_text;
using edge::prune::FoldReport;
using edge::prune::simplify_cnn;
using edge::runtime::Activation;
using edge::runtime::classify;
using edge::runtime::CnnExecutor;
using edge::runtime::CnnQuantLayer;

namespace edge::cli {

namespace {

Result<Model> load_cnn(const std::string& path) {
    const bool st = path.size() > 12 && path.substr(path.size() - 12) == ".safetensors";
    auto m = st ? build_resnet20_cifar(path) : load_model(path);
    if (!m) return m.error();
    if (!is_cnn(m.value()))
        return err(path, ": a ", m->architecture,
                   " model, not a CNN (classify and fold take .onnx CNNs or a ResNet-20 "
                   ".safetensors)");
    return m;
}

struct CnnQuantArgs {
    std::string model, images, labels, plan, precision = "int8";
    double scale = 1.0 / 255.0;
    int64_t calib_images = 256, limit = 0;
    bool weight_only = false, json = false;
};

int run_cnn_quant(const CnnQuantArgs& a) {
    auto m = load_cnn(a.model);
    if (!m) return fail(m.error());
    auto data = load_labelled_images(a.images, a.labels, a.scale);
    if (!data) return fail(data.error());
    if (a.limit > 0 && a.limit < data->count) {
        data->count = a.limit;
        data->labels.resize(size_t(a.limit));
        data->pixels.resize(size_t(a.limit * data->image_size()));
    }
    quant::QuantPlan plan;
    if (!a.plan.empty()) {
        auto p = quant::load_plan(a.plan);
        if (!p) return fail(p.error());
        plan = p.value();
    } else {
        plan = quant::cnn_uniform_plan(a.precision == "int4" ? quant::Precision::INT4 : quant::Precision::INT8);
    }
    quant::CnnQuantOptions o;
    o.int8_activations = !a.weight_only;
    o.calib_images = a.calib_images;
    ProgressBar bar(!a.json);
    auto q = quant::quantize_cnn(m.value(), plan, data->pixels, data->count, o, bar.progress());
    if (!q) return fail(q.error());
    auto ref = CnnExecutor::create(m.value());
    if (!ref) return fail(ref.error());
    auto test = CnnExecutor::create(m.value(), q.value());
    if (!test) return fail(test.error());
    const auto t0 = std::chrono::steady_clock::now();
    auto c = quant::compare_cnn(*ref.value(), *test.value(), data->pixels, data->labels, 500, bar.progress());
    bar.finish();
    if (!c) return fail(c.error());
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    nlohmann::json layers = nlohmann::json::array();
    for (const CnnQuantLayer& l : q->layers)
        layers.push_back({{"layer", l.op},
                          {"bits", l.bits},
                          {"int8_activations", l.int8_activations},
                          {"act_scale", l.act_scale},
                          {"act_zero", l.act_zero}});
    if (a.json) {
        print_json({{"model", a.model},
                    {"images", c->images},
                    {"top1_fp32", c->top1_ref},
                    {"top1", c->top1},
                    {"agreement", c->agreement},
                    {"kl_mean", c->kl_mean},
                    {"kl_max", c->kl_max},
                    {"nll_fp32", c->nll_ref},
                    {"nll", c->nll},
                    {"seconds", secs},
                    {"layers", layers}});
        return kOk;
    }
    std::printf("%s on %s (%lld images)\n", a.model.c_str(), a.images.c_str(), (long long)c->images);
    for (const CnnQuantLayer& l : q->layers)
        std::printf("  %-24s int%d weights per channel%s\n", l.op.c_str(), l.bits,
                    l.int8_activations ? ", int8 activations" : " (weight-only)");
    std::printf("  top-1         %.2f%% (fp32 %.2f%%)\n", 100.0 * c->top1, 100.0 * c->top1_ref);
    std::printf("  agreement     %.2f%%\n", 100.0 * c->agreement);
    std::printf("  KL            mean %.3g, max %.3g nats\n", c->kl_mean, c->kl_max);
    return kOk;
}

struct ClassifyArgs {
    std::string model, images, labels;
    double scale = 1.0 / 255.0;
    int64_t batch = 100, limit = 0;
    int threads = 0;
    bool fold = false, json = false;
};

int run_classify(const ClassifyArgs& a) {
    auto m = load_cnn(a.model);
    if (!m) return fail(m.error());
    FoldReport rep;
    if (a.fold) {
        auto r = simplify_cnn(m.value());
        if (!r) return fail(r.error());
        rep = r.value();
    }
    auto images = calib::read_idx_images(a.images);
    if (!images) return fail(images.error());
    auto labels = calib::read_idx_labels(a.labels);
    if (!labels) return fail(labels.error());
    if (int64_t(labels->size()) != images->count)
        return fail(err(a.labels, ": ", labels->size(), " labels for ", images->count, " images in ", a.images));
    auto exec = CnnExecutor::create(m.value(), a.threads);
    if (!exec) return fail(exec.error());
    const auto& in = exec.value()->input_shape();
    if (in[1] * in[2] * in[3] != images->rows * images->cols)
        return fail(
            err(a.images, ": images are ", images->rows, "x", images->cols, "; ", a.model, " takes ", shape_text(in)));
    std::vector<float> pixels = calib::scale_pixels(images.value(), float(a.scale));
    std::vector<uint8_t> lab = labels.value();
    if (a.limit > 0 && a.limit < int64_t(lab.size())) {
        lab.resize(size_t(a.limit));
        pixels.resize(size_t(a.limit * images->rows * images->cols));
    }
    ProgressBar bar(!a.json);
    const auto t0 = std::chrono::steady_clock::now();
    auto r = classify(*exec.value(), pixels, lab, a.batch, bar.progress());
    bar.finish();
    if (!r) return fail(r.error());
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (a.json) {
        nlohmann::json j{{"model", a.model},
                         {"images", r->images},
                         {"correct", r->correct},
                         {"top1", r->top1()},
                         {"seconds", secs},
                         {"images_per_second", double(r->images) / secs},
                         {"threads", exec.value()->threads()},
                         {"batch", a.batch},
                         {"folded", a.fold},
                         {"nodes", count_nodes(m->graph).total}};
        print_json(j);
        return kOk;
    }
    std::printf("%s on %s\n", a.model.c_str(), a.images.c_str());
    if (a.fold) std::printf("  folded        %s -> %s\n", rep.before.text().c_str(), rep.after.text().c_str());
    std::printf("  top-1         %.2f%% (%lld of %lld)\n", 100.0 * r->top1(), (long long)r->correct,
                (long long)r->images);
    std::printf("  throughput    %.0f images/s (%d threads, batch %lld, %.2f s)\n", double(r->images) / secs,
                exec.value()->threads(), (long long)a.batch, secs);
    return kOk;
}

struct FoldArgs {
    std::string model;
    int samples = 4;
    bool json = false;
};

int run_fold(const FoldArgs& a) {
    auto m = load_cnn(a.model);
    if (!m) return fail(m.error());
    Model folded = m.value();
    auto rep = simplify_cnn(folded);
    if (!rep) return fail(rep.error());
    // The folded graph computes the same function: compare on seeded random inputs.
    auto e1 = CnnExecutor::create(m.value());
    if (!e1) return fail(e1.error());
    auto e2 = CnnExecutor::create(folded);
    if (!e2) return fail(e2.error());
    auto shape = e1.value()->input_shape();
    shape[0] = std::max(1, a.samples);
    Activation in{shape, {}};
    in.data.resize(size_t(in.numel()));
    std::mt19937 rng(1234);
    std::normal_distribution<float> g(0.0f, 1.0f);
    for (float& v : in.data) v = g(rng);
    auto y1 = e1.value()->run(in);
    if (!y1) return fail(y1.error());
    auto y2 = e2.value()->run(in);
    if (!y2) return fail(y2.error());
    double diff = 0, scale = 0;
    for (size_t i = 0; i < y1->data.size(); ++i) {
        diff = std::max(diff, double(std::fabs(y1->data[i] - y2->data[i])));
        scale = std::max(scale, double(std::fabs(y1->data[i])));
    }
    const double rel = scale > 0 ? diff / scale : diff;
    if (a.json) {
        auto counts = [](const NodeCounts& c) {
            nlohmann::json j{{"total", c.total}};
            for (const auto& [t, n] : c.by_type) j["by_type"][t] = n;
            return j;
        };
        print_json({{"model", a.model},
                    {"nodes_before", counts(rep->before)},
                    {"nodes_after", counts(rep->after)},
                    {"batchnorms_folded", rep->batchnorms_folded},
                    {"adds_merged", rep->adds_merged},
                    {"linears_merged", rep->linears_merged},
                    {"parameters_before", rep->params_before},
                    {"parameters_after", rep->params_after},
                    {"max_relative_difference", rel},
                    {"random_inputs", shape[0]}});
        return kOk;
    }
    std::printf("%s\n", a.model.c_str());
    std::printf("  before        %s\n", rep->before.text().c_str());
    std::printf("  after         %s\n", rep->after.text().c_str());
    std::printf("  folded        %d BatchNorm, %d bias Add, %d Linear pairs\n", rep->batchnorms_folded,
                rep->adds_merged, rep->linears_merged);
    std::printf("  parameters    %s -> %s\n", group_digits(rep->params_before).c_str(),
                group_digits(rep->params_after).c_str());
    std::printf("  outputs       max relative difference %.3g on %lld random inputs\n", rel, (long long)shape[0]);
    return kOk;
}

}  // namespace

Result<Model> load_cnn_model(const std::string& path) { return load_cnn(path); }

Result<calib::LabelledImages> load_labelled_images(const std::string& images, const std::string& labels, double scale) {
    auto ends = [&](const char* suf) {
        const std::string s(suf);
        return images.size() >= s.size() && images.compare(images.size() - s.size(), s.size(), s) == 0;
    };
    if (ends(".csv") || ends(".csv.gz")) return calib::read_digits_csv(images);
    if (labels.empty()) return err(images, ": IDX images need --labels");
    auto im = calib::read_idx_images(images);
    if (!im) return im.error();
    auto lb = calib::read_idx_labels(labels);
    if (!lb) return lb.error();
    if (int64_t(lb->size()) != im->count)
        return err(labels, ": ", lb->size(), " labels for ", im->count, " images in ", images);
    calib::LabelledImages d;
    d.count = im->count;
    d.rows = im->rows;
    d.cols = im->cols;
    d.pixels = calib::scale_pixels(im.value(), float(scale));
    d.labels = lb.value();
    return d;
}

nlohmann::json cnn_summary(const Model& m) {
    nlohmann::json j;
    auto shape = cnn_input_shape(m);
    if (shape) j["input_shape"] = shape.value();
    j["inputs"] = m.graph.inputs;
    j["outputs"] = m.graph.outputs;
    const NodeCounts c = count_nodes(m.graph);
    j["nodes"] = c.total;
    for (const auto& [t, n] : c.by_type) j["nodes_by_type"][t] = n;
    nlohmann::json ops = nlohmann::json::array();
    for (const Op& op : m.graph.ops)
        ops.push_back({{"name", op.name}, {"type", op_type_name(op.type)}, {"weights", op.weights}});
    j["ops"] = ops;
    return j;
}

void print_cnn_summary(const Model& m) {
    auto shape = cnn_input_shape(m);
    std::printf("  input         %s [%s], output %s\n", m.graph.inputs.empty() ? "?" : m.graph.inputs[0].c_str(),
                shape ? shape_text(shape.value()).c_str() : "?",
                m.graph.outputs.empty() ? "?" : m.graph.outputs[0].c_str());
    std::printf("  graph         %s\n", count_nodes(m.graph).text().c_str());
    for (const Op& op : m.graph.ops) {
        std::string w;
        for (const auto& t : op.weights) w += (w.empty() ? "" : ", ") + t;
        std::printf("    %-14s %-28s %s\n", op_type_name(op.type), op.name.c_str(), w.c_str());
    }
}

void add_cnn_commands(CLI::App& app, int& rc) {
    auto c = std::make_shared<ClassifyArgs>();
    CLI::App* cls = app.add_subcommand("classify", "Top-1 accuracy of a CNN on a labelled IDX image set (MNIST)");
    cls->add_option("model", c->model, "CNN model (.onnx, or a ResNet-20 .safetensors)")->required();
    cls->add_option("--images", c->images, "IDX image file (.gz or plain)")->required();
    cls->add_option("--labels", c->labels, "IDX label file (.gz or plain)")->required();
    cls->add_option("--scale", c->scale, "Pixel scale (default 1/255)");
    cls->add_option("--batch", c->batch, "Images per run (default 100)")->check(CLI::PositiveNumber);
    cls->add_option("--limit", c->limit, "Only the first N images")->check(CLI::NonNegativeNumber);
    cls->add_option("--threads", c->threads, "Threads (default: all cores)");
    cls->add_flag("--fold", c->fold, "Fold BatchNorm and bias Adds first");
    cls->add_flag("--json", c->json, "Print JSON");
    cls->callback([c, &rc] { rc = run_classify(*c); });

    auto f = std::make_shared<FoldArgs>();
    CLI::App* fold =
        app.add_subcommand("fold", "Fold BatchNorm into convs and merge linear ops; node counts before/after");
    fold->add_option("model", f->model, "CNN model (.onnx, or a ResNet-20 .safetensors)")->required();
    fold->add_option("--samples", f->samples, "Random inputs for the output comparison (default 4)")
        ->check(CLI::PositiveNumber);
    fold->add_flag("--json", f->json, "Print JSON");
    fold->callback([f, &rc] { rc = run_fold(*f); });

    auto q = std::make_shared<CnnQuantArgs>();
    CLI::App* cq = app.add_subcommand("cnn-quant", "Quantize a CNN (INT8 W8A8 / INT4) and compare it with FP32");
    cq->add_option("model", q->model, "CNN model (.onnx, or a ResNet-20 .safetensors)")->required();
    cq->add_option("--images", q->images, "IDX image file, or a digits .csv(.gz)")->required();
    cq->add_option("--labels", q->labels, "IDX label file");
    cq->add_option("--scale", q->scale, "Pixel scale for IDX images (default 1/255)");
    cq->add_option("--precision", q->precision, "int8 or int4 for every Conv2d/Linear layer")
        ->capture_default_str()
        ->check(CLI::IsMember({"int8", "int4"}));
    cq->add_option("--plan", q->plan, "A *.plan.json instead of --precision (per-channel layers)");
    cq->add_option("--calib-images", q->calib_images, "Calibration images (the first N)")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    cq->add_option("--limit", q->limit, "Only the first N images")->check(CLI::NonNegativeNumber);
    cq->add_flag("--weight-only", q->weight_only, "Keep activations in float (no INT8 activations)");
    cq->add_flag("--json", q->json, "Print JSON");
    cq->callback([q, &rc] { rc = run_cnn_quant(*q); });
}

}  // namespace edge::cli
