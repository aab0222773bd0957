// Shared setup of edge-quant-bench's modes: the model, the evaluation text, calibration sequences
// from the second half of the text, and the FP32 reference executor.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "engine/core/mapped_file.h"
#include "engine/model/loader.h"
#include "engine/quant/apply.h"
#include "engine/validate/consistency.h"

struct BenchArgs {
    std::string model_path = EDGE_SHARED_DIR "/models/stories260K/stories260K.gguf";
    std::string text_path = EDGE_SHARED_DIR "/data/tinystories_val.txt";
    int parts = 400, calib_seqs = 32, calib_len = 128, threads = 1;
    std::string only, mode = "table", file;
    std::string kernels = "auto";   // cap on the quantized kernel family (A/B runs)
    std::string prefetch = "auto";  // the AVX-512 row kernels' prefetch (A/B runs)
    std::string tokens;             // --mode gemm --tokens 1,128: these token counts only (default 1,16,128,512)
    std::string lead;               // --lead 1,2,...: passes the prefetch looks ahead; in --mode stream, an A/B
};

struct BenchRow {
    edge::validate::ConsistencyResult cmp;
    double tokens_per_s = 0;
};

struct BenchSetup {
    BenchArgs args;
    std::shared_ptr<const edge::model::Model> model;
    std::string text;
    std::unique_ptr<edge::tokenizer::Tokenizer> tok;
    edge::quant::CalibSet calib;
    edge::validate::PplOptions ppl;
    std::unique_ptr<edge::runtime::LlamaCpu> ref;
    std::string only;
    int threads = 1;

    static edge::Result<BenchSetup> create(const BenchArgs& a);
    // Consistency of `m` against the FP32 reference; decode speed when `speed`.
    edge::Result<BenchRow> evaluate(const std::shared_ptr<const edge::model::Model>& m, bool speed);
};

int run_sensitivity_bench(BenchSetup& s);
int run_stream_bench(const BenchArgs& a);
// bench_decode.cpp: the processor's name (/proc/cpuinfo) and the read bandwidth in bytes/s of
// `threads` threads each summing its share of a `bytes` buffer (AVX2 loads), best of 5.
std::string cpu_model();
// The middle value (the upper one of an even count; 0 when empty).
double median(std::vector<double> v);
double read_bandwidth(size_t bytes, int threads);
int run_decode_bench(const BenchArgs& a);
int run_kernel_bench(const BenchArgs& a);
int run_gemm_bench(const BenchArgs& a);
int run_attention_bench(const BenchArgs& a);
int run_layerwise_bench(const BenchArgs& a);
