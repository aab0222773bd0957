#include "app/cli/common.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <iostream>

#include <CLI/CLI.hpp>

#include "engine/core/mapped_file.h"
#include "engine/core/memory_budget.h"
#include "engine/model/loader.h"
#include "engine/model/weights.h"
#include "engine/runtime/cpu/llama_cpu.h"
#include "engine/runtime/ggml/ggml_compat.h"

using edge::model::load_model;
using edge::model::LoadOptions;
using edge::model::Model;
using edge::runtime::Numerics;
using edge::runtime::parse_numerics;
using edge::runtime::RuntimeOptions;
using edge::tokenizer::make_tokenizer;
using edge::tokenizer::Tokenizer;

namespace edge::cli {

int fail(const std::string& message) {
    std::fprintf(stderr, "edgestudio-cli: %s\n", message.c_str());
    return kFailed;
}
int fail(const Error& e) { return fail(e.message); }

void print_json(const nlohmann::json& j) {
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    std::cout.flush();
}

std::string human_bytes(double b) { return format_memory_size(b > 0 ? uint64_t(std::round(b)) : 0); }

std::string group_digits(int64_t n) {
    std::string s = std::to_string(n < 0 ? -n : n), out;
    for (size_t i = 0; i < s.size(); ++i) {
        if (i && (s.size() - i) % 3 == 0) out += ',';
        out += s[i];
    }
    return n < 0 ? "-" + out : out;
}

namespace {
double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
}  // namespace

ProgressBar::ProgressBar(bool enabled)
    : enabled_(enabled && isatty(STDERR_FILENO)),
      progress_([this](double f, const std::string& stage) { draw(f, stage); }) {}

ProgressBar::~ProgressBar() { finish(); }

void ProgressBar::draw(double fraction, const std::string& stage) {
    if (!enabled_) return;
    if (!std::isfinite(fraction)) fraction = 0.0;
    fraction = std::min(1.0, std::max(0.0, fraction));
    const int permille = int(fraction * 1000.0);
    const double t = now_s();
    if (permille == last_permille_ || (permille < 1000 && permille - last_permille_ < 10 && t - last_time_ < 0.1))
        return;
    last_permille_ = permille;
    last_time_ = t;
    constexpr int kWidth = 30;
    const int filled = int(fraction * kWidth);
    std::string bar(size_t(filled), '#');
    bar.resize(kWidth, ' ');
    std::string label = stage.size() > 40 ? stage.substr(0, 37) + "..." : stage;
    std::fprintf(stderr, "\r[%s] %3d%% %-40s", bar.c_str(), permille / 10, label.c_str());
    std::fflush(stderr);
    drawn_ = true;
}

void ProgressBar::finish() {
    if (drawn_) {
        std::fprintf(stderr, "\r%*s\r", 80, "");
        std::fflush(stderr);
    }
    drawn_ = false;
    last_permille_ = -1;
}

void NumericsArgs::add_options(CLI::App* sub) {
    sub->add_option("--numerics", numerics,
                    "fp32 (default) or llamacpp: llama.cpp's CPU arithmetic, for GGUF files as stored "
                    "(docs/quant-formats.md)")
        ->check(CLI::IsMember({"fp32", "llamacpp"}));
    sub->add_option(
           "--llamacpp-threads", llamacpp_threads,
           "llamacpp numerics: llama.cpp's thread count for its split-KV decode over >= 512 cells (0 = no split)")
        ->check(CLI::Range(0, 4096));
    sub->add_option("--llamacpp-kv-pad", llamacpp_kv_pad,
                    "llamacpp numerics: llama.cpp's KV view padding in cells (default 256)")
        ->check(CLI::Range(1, 1 << 20));
}

Status NumericsArgs::apply(RuntimeOptions& ro) const {
    auto n = parse_numerics(numerics);
    if (!n.ok()) return n.error();
    ro.numerics = *n;
    ro.llamacpp.split_kv_threads = llamacpp_threads;
    ro.llamacpp.kv_view_pad = llamacpp_kv_pad;
    return Status{};
}

Result<std::unique_ptr<prune::PrunedModel>> prune_for_plan(const Model& m, const std::string& plan, bool say) {
    auto prunes = prune::plan_prunes(plan);
    if (!prunes.ok()) return prunes.error();
    if (!*prunes) return std::unique_ptr<prune::PrunedModel>();
    auto p = prune::prune_with_plan(m, plan);
    if (!p.ok()) return p.error();
    if (say)
        std::fprintf(stderr, "edgestudio-cli: %s prunes first: %s -> %s\n", plan.c_str(),
                     p->report.config_before.c_str(), p->report.config_after.c_str());
    return std::make_unique<prune::PrunedModel>(std::move(p).value());
}

void CalibTextArgs::add_options(CLI::App* sub) {
    sub->add_option("--calib", calib, "Calibration text (needed by AWQ and GPTQ layers)");
    sub->add_option("--eval-text", eval_text,
                    "Evaluation text: its paragraphs are removed from the calibration text (and reported)");
    sub->add_option("--calib-sequences", calib_sequences, "Calibration sequences")->capture_default_str();
    sub->add_option("--calib-len", calib_len, "Tokens per calibration sequence")->capture_default_str();
}

Result<std::unique_ptr<quant::CalibSet>> CalibTextArgs::read(const Tokenizer* tok) const {
    if (calib.empty()) return std::unique_ptr<quant::CalibSet>();
    if (!tok) return err(calib, ": calibration needs the model's tokenizer; pass --tokenizer FILE");
    auto text = read_text_file(calib);
    if (!text.ok()) return text.error();
    if (!eval_text.empty()) {
        // Calibration never sees what the evaluation scores: shared paragraphs are dropped.
        auto eval = read_text_file(eval_text);
        if (!eval.ok()) return eval.error();
        quant::DisjointCalib d = quant::remove_evaluation_paragraphs(*text, *eval);
        std::fprintf(stderr, "edgestudio-cli: %s: %s (%s)\n", calib.c_str(), quant::describe(d).c_str(),
                     eval_text.c_str());
        *text = std::move(d.text);
    }
    auto set = quant::calib_from_text(*tok, *text, calib_sequences, calib_len);
    if (!set.ok()) return err(calib, ": ", set.message());
    if (!set->warning.empty()) std::fprintf(stderr, "edgestudio-cli: warning: %s\n", set->warning.c_str());
    return std::make_unique<quant::CalibSet>(std::move(set).value());
}

bool NumericsArgs::llamacpp() const {
    auto n = parse_numerics(numerics);
    return n.ok() && *n == Numerics::LlamaCpp;
}

Result<LoadedModel> load(const std::string& path, const std::string& tokenizer_path, bool need_tokenizer,
                         Weights weights) {
    LoadOptions lo;
    lo.tokenizer_path = tokenizer_path;
    // Opened lazily first, so the memory the weights will take is known before it is taken.
    lo.lazy_weights = true;
    Result<Model> m = [&] {
        ProgressBar bar;
        return load_model(path, lo, bar.progress());
    }();
    if (!m.ok()) return m.error();
    if (weights != Weights::Lazy && !model::weights_resident(*m)) {
        const bool stored = weights == Weights::AsStored;
        uint64_t bytes = stored ? model::as_stored_bytes(*m) : 0;
        if (!stored)
            for (const Tensor& t : m->tensors)
                if (model::is_unread(t)) bytes += t.nbytes;
        EDGE_TRY(check_memory(path, {{stored ? "weights as stored" : "weights as F32", bytes}}, memory_budget(),
                              "compile it to an engine (edgestudio-cli compile MODEL --plan PLAN) or quantize it "
                              "(edgestudio-cli quantize) and run that, or use a machine with more memory"));
        ProgressBar bar;
        EDGE_TRY(stored ? model::load_weights_as_stored(*m, bar.progress()) : model::load_weights(*m, bar.progress()));
    }
    LoadedModel out;
    if (need_tokenizer) {
        if (m->tokenizer.empty()) {
            if (!tokenizer_path.empty())
                return err(path, ": the tokenizer ", tokenizer_path, " was not used by this model format");
            return err(path, ": the model carries no tokenizer; pass --tokenizer FILE");
        }
        auto tok = make_tokenizer(m->tokenizer);
        if (!tok.ok()) return err(path, ": ", tok.message());
        out.tokenizer = std::move(tok).value();
    }
    out.model = std::make_shared<const Model>(std::move(m).value());
    return out;
}

}  // namespace edge::cli
