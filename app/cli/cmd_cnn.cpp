// CNN commands over engine/model (ONNX, ResNet-20 builder), engine/runtime (CnnExecutor) and
// engine/prune (folding):
//   classify MODEL --images IDX --labels IDX   top-1 accuracy on a labelled image set
//   fold MODEL                                 BatchNorm folding + linear merging: node counts
//                                              before/after and the largest output difference
// MODEL is an .onnx file, or a CIFAR ResNet-20 .safetensors checkpoint (conv1/bn1/layerN...).
// Also the CNN part of `info` (cnn_summary).
#include <CLI/CLI.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>

#include "app/cli/common.h"
#include "engine/model/cnn_ir.h"
#include "engine/model/loader.h"
#include "engine/prune/fold.h"
#include "engine/runtime/cnn.h"
#include "engine/runtime/cnn_data.h"

namespace edge::cli {

namespace {

Result<Model> load_cnn(const std::string& path) {
    const bool st = path.size() > 12 && path.substr(path.size() - 12) == ".safetensors";
    auto m = st ? build_resnet20_cifar(path) : load_model(path);
    if (!m) return m.error();
    if (!is_cnn(m.value()))
        return err(path, ": a ", m->architecture, " model, not a CNN (classify and fold take .onnx CNNs or a ResNet-20 "
                         ".safetensors)");
    return m;
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
    auto images = read_idx_images(a.images);
    if (!images) return fail(images.error());
    auto labels = read_idx_labels(a.labels);
    if (!labels) return fail(labels.error());
    if (int64_t(labels->size()) != images->count)
        return fail(err(a.labels, ": ", labels->size(), " labels for ", images->count, " images in ", a.images));
    auto exec = CnnExecutor::create(m.value(), a.threads);
    if (!exec) return fail(exec.error());
    const auto& in = exec.value()->input_shape();
    if (in[1] * in[2] * in[3] != images->rows * images->cols)
        return fail(err(a.images, ": images are ", images->rows, "x", images->cols, "; ", a.model, " takes ",
                        shape_text(in)));
    std::vector<float> pixels = scale_pixels(images.value(), float(a.scale));
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
        nlohmann::json j{{"model", a.model},       {"images", r->images},  {"correct", r->correct},
                         {"top1", r->top1()},      {"seconds", secs},      {"images_per_second", double(r->images) / secs},
                         {"threads", exec.value()->threads()}, {"batch", a.batch}, {"folded", a.fold},
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
    for (const Op& op : m.graph.ops) ops.push_back({{"name", op.name}, {"type", op_type_name(op.type)}, {"weights", op.weights}});
    j["ops"] = ops;
    return j;
}

void print_cnn_summary(const Model& m) {
    auto shape = cnn_input_shape(m);
    std::printf("  input         %s [%s], output %s\n", m.graph.inputs.empty() ? "?" : m.graph.inputs[0].c_str(),
                shape ? shape_text(shape.value()).c_str() : "?", m.graph.outputs.empty() ? "?" : m.graph.outputs[0].c_str());
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
    CLI::App* fold = app.add_subcommand("fold", "Fold BatchNorm into convs and merge linear ops; node counts before/after");
    fold->add_option("model", f->model, "CNN model (.onnx, or a ResNet-20 .safetensors)")->required();
    fold->add_option("--samples", f->samples, "Random inputs for the output comparison (default 4)")
        ->check(CLI::PositiveNumber);
    fold->add_flag("--json", f->json, "Print JSON");
    fold->callback([f, &rc] { rc = run_fold(*f); });
}

}  // namespace edge::cli
