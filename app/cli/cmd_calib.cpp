// `calib-select MODEL --pool FILE --n N --method kmeans|random --seed S --out FILE`: choose a
// calibration set out of a pool (engine/calib).
//   LLM (MODEL with a tokenizer): the pool is text, one sample per blank-line-separated
//     paragraph; OUT gets the chosen paragraphs (pool order, blank lines between), which
//     `quantize --calib OUT` reads; the flags that make quantize use all of it are printed.
//   CNN (.onnx, ResNet-20 .safetensors): the pool is an IDX image file (gzip or plain); OUT gets
//     the chosen images as an IDX image file; --labels IDX writes their labels beside it
//     (OUT.labels), and --pseudo-labels keeps only the pool images the classifier labels with
//     confidence >= the threshold of --depth, writing those labels instead.
// A JSON report (chosen pool indices, cluster sizes, distances, hardware weights and the settings)
// goes to --report (default OUT.json) and, with --json, to stdout.
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <map>

#include "app/cli/common.h"
#include "engine/calib/calib_file.h"
#include "engine/calib/embed.h"
#include "engine/calib/image_sets.h"
#include "engine/calib/pseudo_label.h"
#include "engine/calib/select.h"
#include "engine/calib/select_text.h"
#include "engine/calib/weighting.h"
#include "engine/core/mapped_file.h"
#include "engine/model/cnn_ir.h"
#include "engine/model/loader.h"

using edge::model::build_resnet20_cifar;
using edge::model::cnn_input_shape;
using edge::model::is_cnn;
using edge::model::load_model;
using edge::model::Model;
using edge::model::shape_text;
using edge::tokenizer::Tokenizer;

namespace edge::cli {

namespace {

struct CalibArgs {
    std::string model, tokenizer, pool, out, report, labels;
    int n = 128;
    std::string method = "kmeans";
    uint64_t seed = 1;
    int max_tokens = 128, calib_len = 128, threads = 0;
    // hardware weighting
    bool no_hw = false;
    int token_multiple = 16, tile = 8;
    double length_strength = 1.0, align_strength = 1.0, channel_strength = 1.0;
    // CNN
    double scale = 1.0 / 255.0;
    bool pseudo = false;
    double threshold = 0.92;
    int depth = -1;
    std::vector<std::string> depth_thresholds;  // "D=T"
    bool json = false;
};

nlohmann::json selection_json(const calib::Selection& s) {
    nlohmann::json j{{"method", calib::select_method_name(s.method)},
                     {"seed", s.seed},
                     {"indices", s.indices},
                     {"weights", s.weights}};
    if (s.method == calib::SelectMethod::KMeans) {
        j["cluster_sizes"] = s.cluster_sizes;
        j["distances"] = s.distances;
        j["inertia"] = s.inertia;
        j["iterations"] = s.iterations;
    }
    return j;
}

nlohmann::json hardware_json(const CalibArgs& a, const calib::HardwareProfile& hw) {
    if (a.no_hw) return nlohmann::json{{"enabled", false}};
    return {{"enabled", true},
            {"token_multiple", hw.token_multiple},
            {"preferred_tokens", hw.preferred_tokens},
            {"spatial_multiple", hw.spatial_multiple},
            {"input_h", hw.input_h},
            {"input_w", hw.input_w},
            {"length_strength", hw.length_strength},
            {"alignment_strength", hw.alignment_strength},
            {"channel_strength", hw.channel_strength}};
}

Status write_report(const CalibArgs& a, const nlohmann::json& j) {
    const std::string path = a.report.empty() ? a.out + ".json" : a.report;
    EDGE_TRY(write_text_file(path, j.dump(2) + "\n"));
    if (a.json) print_json(j);
    return {};
}

Result<calib::SelectOptions> select_options(const CalibArgs& a) {
    auto method = calib::parse_select_method(a.method);
    if (!method) return method.error();
    calib::SelectOptions so;
    so.n = a.n;
    so.method = method.value();
    so.seed = a.seed;
    so.threads = a.threads;
    return so;
}

calib::HardwareProfile hardware_profile(const CalibArgs& a) {
    calib::HardwareProfile hw;
    hw.token_multiple = a.token_multiple;
    hw.preferred_tokens = a.max_tokens;
    hw.spatial_multiple = a.tile;
    hw.length_strength = a.length_strength;
    hw.alignment_strength = a.align_strength;
    hw.channel_strength = a.channel_strength;
    return hw;
}

int run_text(const CalibArgs& a, const std::shared_ptr<const Model>& model, const Tokenizer& tok) {
    auto so = select_options(a);
    if (!so) return fail(so.error());
    auto text = read_text_file(a.pool);
    if (!text) return fail(text.error());
    const auto pool = calib::split_paragraphs(text.value());
    ProgressBar bar(!a.json);
    calib::TextSelectOptions to;
    to.select = so.value();
    to.embed.max_tokens = a.max_tokens;
    to.embed.threads = a.threads;
    to.hardware_weights = !a.no_hw;
    to.hardware = hardware_profile(a);
    auto picked = calib::select_paragraphs(model, tok, pool, to, a.pool, bar.progress());
    bar.finish();
    if (!picked) return fail(picked.error());
    const calib::HardwareProfile& hw = to.hardware;
    const calib::Selection* sel = &picked->selection;
    const int64_t stream = picked->stream_tokens;  // tokens quantize will see (no BOS per paragraph)
    if (auto s = write_text_file(a.out, picked->text()); !s) return fail(s.error());
    const int64_t seqs = std::max<int64_t>(1, stream / (a.calib_len - 1));
    nlohmann::json j = selection_json(*sel);
    j["model"] = a.model;
    j["pool"] = a.pool;
    j["pool_kind"] = "text";
    j["pool_size"] = pool.size();
    j["out"] = a.out;
    j["tokens"] = picked->tokens;
    j["stream_tokens"] = stream;
    j["embedding"] = {
        {"kind", "mean-pooled final hidden state"}, {"dim", picked->embed_dim}, {"max_tokens", a.max_tokens}};
    j["hardware"] = hardware_json(a, hw);
    j["quantize"] = {{"calib", a.out}, {"calib_sequences", seqs}, {"calib_len", a.calib_len}};
    if (auto s = write_report(a, j); !s) return fail(s.error());
    if (!a.json) {
        std::printf("%s: %zu of %zu paragraphs by %s (seed %llu), %lld tokens\n", a.out.c_str(), sel->indices.size(),
                    pool.size(), a.method.c_str(), static_cast<unsigned long long>(a.seed),
                    static_cast<long long>(stream));
        if (so->method == calib::SelectMethod::KMeans)
            std::printf(
                "  k-means: %d iterations, inertia %.4g, cluster sizes %lld..%lld\n", sel->iterations, sel->inertia,
                static_cast<long long>(*std::min_element(sel->cluster_sizes.begin(), sel->cluster_sizes.end())),
                static_cast<long long>(*std::max_element(sel->cluster_sizes.begin(), sel->cluster_sizes.end())));
        std::printf("  report: %s\n", (a.report.empty() ? a.out + ".json" : a.report).c_str());
        std::printf(
            "  use: edgestudio-cli quantize %s --plan PLAN --calib %s --calib-sequences %lld --calib-len %d --out "
            "M.edgeq\n",
            a.model.c_str(), a.out.c_str(), static_cast<long long>(seqs), a.calib_len);
    }
    return kOk;
}

Result<Model> load_cnn_model(const std::string& path) {
    const bool st = path.size() > 12 && path.substr(path.size() - 12) == ".safetensors";
    return st ? build_resnet20_cifar(path) : load_model(path);
}

int run_images(const CalibArgs& a, const Model& model) {
    auto so = select_options(a);
    if (!so) return fail(so.error());
    auto shape = cnn_input_shape(model);
    if (!shape) return fail(shape.error());
    if (shape->size() != 4) return fail(err(a.model, ": input shape ", shape_text(shape.value()), " is not NCHW"));
    auto images = calib::read_idx_images(a.pool);
    if (!images) return fail(images.error());
    const int64_t c = (*shape)[1], h = (*shape)[2], w = (*shape)[3];
    if (images->count == 0) return fail(err(a.pool, ": the calibration pool is empty (0 images)"));
    if (c * h * w != images->rows * images->cols)
        return fail(err(a.pool, ": images are ", images->rows, "x", images->cols, "; ", a.model, " takes ",
                        shape_text(shape.value())));
    std::vector<uint8_t> true_labels;
    if (!a.labels.empty()) {
        auto l = calib::read_idx_labels(a.labels);
        if (!l) return fail(l.error());
        if (int64_t(l->size()) != images->count)
            return fail(err(a.labels, ": ", l->size(), " labels for ", images->count, " images in ", a.pool));
        true_labels = l.value();
    }
    const std::vector<float> pixels = calib::scale_pixels(images.value(), float(a.scale));
    const int64_t per = c * h * w;
    ProgressBar bar(!a.json);

    // Candidates: every image, or those pseudo-labelled confidently enough at --depth.
    std::vector<int64_t> candidates;
    nlohmann::json pseudo_json;
    calib::PseudoLabels pl;
    if (a.pseudo) {
        auto r = calib::pseudo_label(model, pixels, images->count, 100, a.threads, bar.progress());
        if (!r) return fail(r.error());
        pl = std::move(r).value();
        calib::PseudoLabelOptions po;
        po.threshold = a.threshold;
        for (const std::string& dt : a.depth_thresholds) {
            const size_t eq = dt.find('=');
            char* end = nullptr;
            const long d = eq == std::string::npos ? -1 : std::strtol(dt.c_str(), &end, 10);
            const double t = eq == std::string::npos ? NAN : std::strtod(dt.c_str() + eq + 1, nullptr);
            if (eq == std::string::npos || end != dt.c_str() + eq || eq + 1 >= dt.size())
                return fail(err("--depth-threshold '", dt, "': expected DEPTH=THRESHOLD, e.g. 0=0.5"));
            po.per_depth[int(d)] = t;
        }
        const int depth = a.depth < 0 ? int(pl.layers.size()) - 1 : a.depth;
        auto keep = calib::accepted_samples(pl, po, depth);
        if (!keep) return fail(err(a.model, ": ", keep.message()));
        candidates = keep.value();
        auto t = calib::threshold_for_depth(po, depth, int(pl.layers.size()));
        pseudo_json = {{"depth", depth},      {"layer", pl.layers[size_t(depth)]}, {"threshold", t.value()},
                       {"layers", pl.layers}, {"accepted", candidates.size()},     {"pool", images->count}};
        if (candidates.empty())
            return fail(err(a.pool, ": no image reaches the pseudo-label confidence ", t.value(), " at depth ", depth,
                            " (", pl.layers[size_t(depth)], ")"));
    } else {
        for (int64_t i = 0; i < images->count; ++i) candidates.push_back(i);
    }
    if (a.n > int64_t(candidates.size()))
        return fail(err(a.pool, ": ", a.n, " samples asked for, but the pool holds only ", candidates.size(),
                        a.pseudo ? " confidently pseudo-labelled images" : " images", " (ask for at most ",
                        candidates.size(), ")"));

    std::vector<float> cand_pixels;
    cand_pixels.reserve(candidates.size() * size_t(per));
    for (int64_t i : candidates)
        cand_pixels.insert(cand_pixels.end(), pixels.begin() + i * per, pixels.begin() + (i + 1) * per);
    auto feats = calib::cnn_features(model, cand_pixels, int64_t(candidates.size()), 100, a.threads, bar.progress());
    if (!feats) return fail(feats.error());
    calib::HardwareProfile hw = hardware_profile(a);
    hw.input_h = h;
    hw.input_w = w;
    if (!a.no_hw) {
        std::vector<calib::SampleShape> shapes(candidates.size());
        for (size_t k = 0; k < candidates.size(); ++k) {
            shapes[k].height = h;
            shapes[k].width = w;
            const float* px = cand_pixels.data() + k * size_t(per);
            for (int64_t ch = 0; ch < c; ++ch) {
                double s = 0.0;
                for (int64_t q = 0; q < h * w; ++q) s += px[ch * h * w + q];
                shapes[k].channel_mean.push_back(s / double(h * w));
            }
        }
        auto wts = calib::hardware_weights(shapes, hw);
        if (!wts) return fail(wts.error());
        so->weights = wts->weight;
    }
    auto sel = calib::select_samples(feats.value(), so.value(), bar.progress());
    bar.finish();
    if (!sel) return fail(err(a.pool, ": ", sel.message()));
    std::vector<int64_t> chosen;  // pool indices
    for (int64_t k : sel->indices) chosen.push_back(candidates[size_t(k)]);
    if (auto s = calib::write_idx_images(a.out, images.value(), chosen); !s) return fail(s.error());
    nlohmann::json j = selection_json(*sel);
    j["indices"] = chosen;
    j["model"] = a.model;
    j["pool"] = a.pool;
    j["pool_kind"] = "images";
    j["pool_size"] = images->count;
    j["out"] = a.out;
    j["embedding"] = {{"kind", "penultimate features"}, {"dim", feats->dim}};
    j["hardware"] = hardware_json(a, hw);
    std::string labels_out;
    if (a.pseudo || !true_labels.empty()) {
        std::vector<uint8_t> lab;
        std::vector<double> conf;
        for (int64_t i : chosen) {
            lab.push_back(a.pseudo ? uint8_t(pl.label[size_t(i)]) : true_labels[size_t(i)]);
            if (a.pseudo) conf.push_back(pl.confidence[size_t(i)]);
        }
        labels_out = a.out + ".labels";
        if (auto s = calib::write_idx_labels(labels_out, lab); !s) return fail(s.error());
        j["labels_out"] = labels_out;
        j["labels"] = lab;
        if (a.pseudo) {
            pseudo_json["confidence"] = conf;
            if (!true_labels.empty()) {
                int64_t right = 0;
                for (size_t k = 0; k < chosen.size(); ++k) right += lab[k] == true_labels[size_t(chosen[k])];
                pseudo_json["agreement_with_labels"] = double(right) / double(chosen.size());
            }
            j["pseudo_labels"] = pseudo_json;
        }
    }
    if (auto s = write_report(a, j); !s) return fail(s.error());
    if (!a.json) {
        std::printf("%s: %zu of %lld images by %s (seed %llu)%s\n", a.out.c_str(), chosen.size(),
                    static_cast<long long>(images->count), a.method.c_str(), static_cast<unsigned long long>(a.seed),
                    labels_out.empty() ? "" : (", labels in " + labels_out).c_str());
        if (a.pseudo)
            std::printf("  pseudo-labels: %zu of %lld images at confidence >= %.4g (depth %d, %s)\n", candidates.size(),
                        static_cast<long long>(images->count), pseudo_json["threshold"].get<double>(),
                        pseudo_json["depth"].get<int>(), pseudo_json["layer"].get<std::string>().c_str());
        if (so->method == calib::SelectMethod::KMeans)
            std::printf(
                "  k-means on %d-dim penultimate features: %d iterations, cluster sizes %lld..%lld\n", feats->dim,
                sel->iterations,
                static_cast<long long>(*std::min_element(sel->cluster_sizes.begin(), sel->cluster_sizes.end())),
                static_cast<long long>(*std::max_element(sel->cluster_sizes.begin(), sel->cluster_sizes.end())));
        std::printf("  report: %s\n", (a.report.empty() ? a.out + ".json" : a.report).c_str());
    }
    return kOk;
}

int run_calib_select(const CalibArgs& a) {
    if (a.calib_len < 2) return fail(err("--calib-len must be at least 2 (got ", a.calib_len, ")"));
    const bool st = a.model.size() > 12 && a.model.substr(a.model.size() - 12) == ".safetensors";
    if (st || (a.model.size() > 5 && a.model.substr(a.model.size() - 5) == ".onnx")) {
        auto m = load_cnn_model(a.model);
        if (!m) return fail(m.error());
        if (!is_cnn(m.value())) return fail(err(a.model, ": not a CNN (architecture '", m->architecture, "')"));
        return run_images(a, m.value());
    }
    auto loaded = load(a.model, a.tokenizer, true, Weights::AsStored);  // the executor embeds the pool
    if (!loaded) return fail(loaded.error());
    return run_text(a, loaded->model, *loaded->tokenizer);
}

}  // namespace

void add_calib_commands(CLI::App& app, int& rc) {
    auto a = std::make_shared<CalibArgs>();
    CLI::App* c = app.add_subcommand("calib-select",
                                     "Choose a calibration set from a pool (k-means on model embeddings, or random)");
    c->alias("calibrate");  // the loop's step name (docs/studio.md): the same command
    c->add_option("model", a->model, "Model (LLM, or .onnx / ResNet-20 .safetensors CNN)")->required();
    c->add_option("--pool", a->pool, "Pool: text (paragraphs) for an LLM, IDX images for a CNN")->required();
    c->add_option("--n", a->n, "Samples to choose")->capture_default_str();
    c->add_option("--method", a->method, "kmeans or random")->capture_default_str();
    c->add_option("--seed", a->seed, "Seed (k-means++ seeding / random draw)")->capture_default_str();
    c->add_option("--out", a->out, "Calibration file to write (text for LLMs, IDX images for CNNs)")->required();
    c->add_option("--report", a->report, "JSON report (default OUT.json)");
    c->add_option("--tokenizer", a->tokenizer, "Tokenizer file when the model has none");
    c->add_option("--max-tokens", a->max_tokens, "LLM: tokens per paragraph embedded (and the preferred length)")
        ->capture_default_str();
    c->add_option("--calib-len", a->calib_len, "LLM: the --calib-len quantize will use (for the printed flags)")
        ->capture_default_str();
    c->add_flag("--no-hw-weights", a->no_hw, "Plain k-means: no hardware-aware sample weights");
    c->add_option("--token-multiple", a->token_multiple, "LLM: KV block / tile the sequence length should align to")
        ->capture_default_str();
    c->add_option("--tile", a->tile, "CNN: spatial tile the input should align to")->capture_default_str();
    c->add_option("--length-strength", a->length_strength, "Exponent of the length (resolution) factor")
        ->capture_default_str();
    c->add_option("--align-strength", a->align_strength, "Exponent of the alignment factor")->capture_default_str();
    c->add_option("--channel-strength", a->channel_strength, "CNN: exponent of the channel-distribution factor")
        ->capture_default_str();
    c->add_option("--scale", a->scale, "CNN: pixel scale (value * scale)")->capture_default_str();
    c->add_option("--labels", a->labels, "CNN: IDX labels of the pool (written for the chosen images)");
    c->add_flag("--pseudo-labels", a->pseudo, "CNN: keep only confidently classified pool images, write their labels");
    c->add_option("--threshold", a->threshold, "CNN: pseudo-label confidence threshold")->capture_default_str();
    c->add_option("--depth", a->depth, "CNN: layer depth whose threshold applies (default: the head)");
    c->add_option("--depth-threshold", a->depth_thresholds, "CNN: DEPTH=THRESHOLD override (repeatable)");
    c->add_option("--threads", a->threads, "Threads (0: all)")->capture_default_str();
    c->add_flag("--json", a->json, "Print the JSON report");
    c->callback([a, &rc] { rc = run_calib_select(*a); });
}

}  // namespace edge::cli
