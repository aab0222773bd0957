// edge-quant-bench --mode layerwise: layer-wise GPTQ (engine/quant/layerwise.h) of the
// synthesized TinyLlama-1.1B shape in FP32 (4.4 GB; written to --file, default
// /tmp/edge-tinyllama-1.1b-f32.gguf, unless it exists — never into the repository), INT4 g32
// symmetric, --calib-seqs sequences of --calib-len tokens (seeded random token ids: the weights
// are random too). Each quantized tensor is appended to /tmp/edge-layerwise-int4.bin (raw
// bytes) and dropped, so the process holds one block at a time. --parts N stops after N blocks
// (default: every block and the head). Prints, after each block, the seconds and the process's
// peak resident memory (VmHWM) and current RssAnon / RssFile from /proc/self/status.
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>

#include "bench_common.h"
#include "engine/model/synth.h"
#include "engine/quant/layerwise.h"

using edge::model::load_model;
using edge::model::Model;
using edge::model::SynthOptions;
using edge::model::write_synth_model;

using namespace edge;
using namespace edge::quant;

namespace {

double status_mib(const char* key) {
    std::ifstream f("/proc/self/status");
    std::string line;
    const std::string k = std::string(key) + ":";
    while (std::getline(f, line))
        if (line.rfind(k, 0) == 0) return std::stod(line.substr(k.size())) / 1024.0;  // kB
    return -1;
}

}  // namespace

int run_layerwise_bench(const BenchArgs& a) {
    using Clock = std::chrono::steady_clock;
    const std::string path = a.file.empty() ? "/tmp/edge-tinyllama-1.1b-f32.gguf" : a.file;
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) {
        std::fprintf(stderr, "writing %s ...\n", path.c_str());
        SynthOptions so;
        so.shape = "tinyllama-1.1b";
        so.path = path;
        so.type = DType::F32;
        so.threads = 2;
        if (auto s = write_synth_model(so); !s.ok()) return std::fprintf(stderr, "%s\n", s.message().c_str()), 1;
    }
    const auto t_load = Clock::now();
    auto loaded = load_model(path);
    if (!loaded.ok()) return std::fprintf(stderr, "%s\n", loaded.message().c_str()), 1;
    const Model& m = *loaded;
    std::printf("model %s (%.2f GB), loaded in %.1f s; RSS after load: anon %.0f MiB, file %.0f MiB\n", path.c_str(),
                double(st.st_size ? st.st_size : 0) / 1e9, std::chrono::duration<double>(Clock::now() - t_load).count(),
                status_mib("RssAnon"), status_mib("RssFile"));
    CalibSet calib;
    std::mt19937 rng(7);
    std::uniform_int_distribution<int32_t> tok(3, m.config.vocab_size - 1);
    for (int s = 0; s < a.calib_seqs; ++s) {
        std::vector<int32_t> seq{1};
        for (int i = 1; i < a.calib_len; ++i) seq.push_back(tok(rng));
        calib.sequences.push_back(std::move(seq));
    }
    LayerwiseOptions o;
    o.spec = QuantSpec{4, true, QGrouping::Group, 32, QMethod::GPTQ};
    o.threads = a.threads;
    o.max_blocks = a.parts == 400 ? -1 : a.parts;  // 400 = the --parts default: everything
    std::FILE* out = std::fopen("/tmp/edge-layerwise-int4.bin", "wb");
    if (!out) return std::fprintf(stderr, "cannot write /tmp/edge-layerwise-int4.bin\n"), 1;
    size_t bytes = 0;
    auto t_block = Clock::now();
    std::string last_block;
    auto sink = [&](Tensor&& t) -> Status {
        if (std::fwrite(t.data.get(), 1, t.nbytes, out) != t.nbytes) return err("short write of ", t.name);
        bytes += t.nbytes;
        const std::string blk = t.name.substr(0, t.name.find('.', 4));
        if (t.name.find("ffn_up") != std::string::npos || t.name == "output.weight") {
            std::printf("%-14s done at %7.1f s (+%6.1f s): VmHWM %.0f MiB, RssAnon %.0f MiB, RssFile %.0f MiB\n",
                        t.name == "output.weight" ? "output" : blk.c_str(),
                        std::chrono::duration<double>(Clock::now() - t_load).count(),
                        std::chrono::duration<double>(Clock::now() - t_block).count(), status_mib("VmHWM"),
                        status_mib("RssAnon"), status_mib("RssFile"));
            std::fflush(stdout);
            t_block = Clock::now();
        }
        return {};
    };
    std::printf("layer-wise GPTQ int4 sym g32, %d x %d calibration tokens, %d thread(s)\n", a.calib_seqs, a.calib_len,
                a.threads);
    auto r = gptq_layerwise(m, calib, sink, o);
    std::fclose(out);
    if (!r.ok()) return std::fprintf(stderr, "%s\n", r.message().c_str()), 1;
    std::printf("\n%d blocks%s in %.1f s; %zu bytes of quantized tensors written; peak RSS (VmHWM) %.0f MiB\n",
                r->blocks_done, r->head_done ? " + head" : "", r->seconds, bytes, status_mib("VmHWM"));
    std::printf("time: FP32 capture forwards %.1f s, Hessians %.1f s, GPTQ %.1f s, quantized forwards %.1f s\n",
                r->seconds_capture, r->seconds_hessian, r->seconds_gptq, r->seconds_requant_forward);
    return 0;
}
