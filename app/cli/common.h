// Shared pieces of edgestudio-cli: exit codes, error output, JSON output, the stderr progress
// bar, and loading a model (with its tokenizer) with messages that name the file.
#pragma once
#include <cstdio>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/calib/image_sets.h"
#include "engine/core/progress.h"
#include "engine/core/result.h"
#include "engine/model/ir.h"
#include "engine/prune/structured.h"
#include "engine/quant/calib.h"
#include "engine/tokenizer/tokenizer.h"

namespace edge::client {
struct ProfileReport;
}  // namespace edge::client

namespace CLI {  // NOLINT(readability-identifier-naming): CLI11's namespace
class App;
}
namespace edge::runtime {
struct RuntimeOptions;
}  // namespace edge::runtime

namespace edge::cli {

enum ExitCode : int { kOk = 0, kFailed = 1, kUsage = 2 };

// Prints "edgestudio-cli: <message>" on stderr and returns kFailed.
int fail(const std::string& message);
int fail(const Error& e);

// Prints a JSON document on stdout (pretty, newline-terminated).
void print_json(const nlohmann::json& j);

// "1.5 MiB", "312 KiB", "17 B".
std::string human_bytes(double bytes);
// 1234567 -> "1,234,567".
std::string group_digits(int64_t n);

// A progress bar on stderr, drawn only when stderr is a terminal (and not in --json mode when
// asked to stay quiet). Redraws at most every 1% or 100 ms; finish() ends the line.
class ProgressBar {
public:
    explicit ProgressBar(bool enabled = true);
    ~ProgressBar();
    Progress* progress() { return &progress_; }
    void finish();

private:
    void draw(double fraction, const std::string& stage);
    bool enabled_;
    bool drawn_ = false;
    int last_permille_ = -1;
    double last_time_ = 0.0;
    Progress progress_;
};

// --numerics and llama.cpp's settings for it, shared by generate and perplexity.
struct NumericsArgs {
    std::string numerics = "fp32";
    int llamacpp_threads = 0, llamacpp_kv_pad = 256;
    void add_options(CLI::App* sub);
    // ro.numerics and ro.llamacpp from the options; an error names an unknown --numerics.
    Status apply(runtime::RuntimeOptions& ro) const;
    // True when llama.cpp's numerics were asked for (they need the weights as F32).
    bool llamacpp() const;
};

struct LoadedModel {
    std::shared_ptr<const model::Model> model;
    std::unique_ptr<tokenizer::Tokenizer> tokenizer;  // null unless requested
};

// How load() leaves the weights of a model file (compiled engines and .edgeq files hold theirs as
// they are either way).
enum class Weights {
    F32,       // every tensor read as F32 (for commands that compute over weights in FP32)
    AsStored,  // matrices as stored (F16/BF16 aliasing the file, Q8_0/Q4_0 repacked as QI8/QI4;
               // engine/model/weights.h): what the CPU executor runs, without an FP32 copy
    Lazy,      // only the header, configuration, tokenizer and tensor table (engine/model/weights.h):
               // for commands that never need the weights, or stream over them a tensor at a time
};

// Loads MODEL (any format load_model knows), with a progress bar. When need_tokenizer is set, a
// model without a tokenizer is an error telling the user to pass --tokenizer. Before reading
// weights it checks that they fit (the --memory-limit / machine preflight).
Result<LoadedModel> load(const std::string& path, const std::string& tokenizer_path, bool need_tokenizer,
                         Weights weights = Weights::F32);

// --calib FILE [--eval-text FILE] [--calib-sequences N] [--calib-len N]: the calibration text of
// AWQ and GPTQ layers, shared by quantize and compile.
struct CalibTextArgs {
    std::string calib, eval_text;
    int calib_sequences = 32, calib_len = 128;
    void add_options(CLI::App* sub);
    // The calibration set, or null when no --calib was given: the text tokenized by `tok`, with the
    // evaluation text's paragraphs removed first (reported on stderr), warnings printed.
    Result<std::unique_ptr<quant::CalibSet>> read(const tokenizer::Tokenizer* tok) const;
};

// The pruning a plan file carries ("prune" section), applied to `m` before it is quantized: null
// when the plan prunes nothing. With `say`, one line on stderr: the configuration before and after.
Result<std::unique_ptr<prune::PrunedModel>> prune_for_plan(const model::Model& m, const std::string& plan, bool say);

// cmd_configs.cpp (the studio's project files; built with the studio's item models): the engine
// file configuration `name` was compiled to for `target`, and the profiles of boards recorded as
// measurements of the configurations whose engines they ran (matched by SHA-256), one line each.
Result<std::string> configuration_engine(const std::string& project, const std::string& name,
                                         const std::string& target);
struct BoardProfile {
    std::string board;
    const client::ProfileReport* report = nullptr;
    std::string engine_sha256;  // hex, of the live engine the run used
    std::string workload;       // the workload's name ("": prompts given on the command line)
};
Result<std::vector<std::string>> record_profiles(const std::string& project, const std::vector<BoardProfile>& runs);
// A named profile workload of the project (the studio's Boards page saves them): prompts with
// their token count and chat setting, or a serving workload's text and concurrency.
struct NamedWorkload {
    std::vector<std::string> prompts;
    int max_tokens = 64;
    bool chat = false;
    std::string serve;
    int concurrency = 8;
};
Result<NamedWorkload> project_workload(const std::string& project, const std::string& name);

// Subcommand registration (one file per command group). Each sets `rc` when it runs.
void add_info_command(CLI::App& app, int& rc);
void add_text_commands(CLI::App& app, int& rc);  // generate, tokenize
void add_perplexity_command(CLI::App& app, int& rc);
void add_bench_command(CLI::App& app, int& rc);
void add_synth_command(CLI::App& app, int& rc);
void add_compile_command(CLI::App& app, int& rc);
void add_quant_commands(CLI::App& app, int& rc);  // quantize, validate
void add_export_command(CLI::App& app, int& rc);  // export (GGUF)
void add_cnn_commands(CLI::App& app, int& rc);    // classify, fold; cnn_summary/print_cnn_summary serve `info`
nlohmann::json cnn_summary(const model::Model& m);
void print_cnn_summary(const model::Model& m);
// cmd_cnn.cpp: a CNN from .onnx or a ResNet-20 .safetensors; a labelled image set from IDX
// images + labels (pixels * scale) or a digits .csv(.gz) (labels unused).
Result<model::Model> load_cnn_model(const std::string& path);
Result<calib::LabelledImages> load_labelled_images(const std::string& images, const std::string& labels, double scale);
void add_kv_commands(CLI::App& app, int& rc);        // kv-sim, serve-bench
void add_calib_commands(CLI::App& app, int& rc);     // calib-select
void add_analysis_commands(CLI::App& app, int& rc);  // analyze, autoplan (LibTorch builds only)
void add_remote_commands(CLI::App& app, int& rc);    // deploy, profile, boards (libssh builds only)

}  // namespace edge::cli
