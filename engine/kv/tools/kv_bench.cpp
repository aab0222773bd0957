// edge-kv-bench: the numbers in docs/kv.md.
//   edge-kv-bench [--traces DIR] [--write-traces DIR] [--kv-dump FILE] [--repeats N]
//                 [--device-fraction F]   (device tier = F x a trace's distinct blocks, default 0.15)
// Prints the waste comparison, the compression table (on a K/V dump captured from the executor
// when --kv-dump is given, and on synthetic K/V at the stories260K and 1.1B shapes), the
// break-even between fetching a compressed block and recomputing it, and the policy table.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "engine/kv/codec_table.h"
#include "engine/kv/tier_sim.h"
#include "engine/kv/trace_gen.h"
#include "engine/kv/waste.h"

using namespace edge::kv;

namespace {

int fail(const std::string& m) {
    std::fprintf(stderr, "edge-kv-bench: %s\n", m.c_str());
    return 1;
}

// TinyLlama-1.1B geometry: 22 layers, 4 KV heads of 64, dim 2048, ~1.1e9 parameters.
constexpr KvShape kShape11B{22, 4, 64, 16};
constexpr double kParams11B = 1.1e9;
// stories260K geometry: 5 layers, 4 KV heads of 8.
constexpr KvShape kShape260K{5, 4, 8, 16};

bool codec_table(const char* title, const KvCapture& cap, int repeats, std::vector<CodecRow>* keep) {
    auto blocks = capture_to_blocks(cap);
    if (!blocks) return fail(blocks.message()), false;
    auto rows = measure_codecs(*blocks, cap.shape, repeats);
    if (!rows) return fail(rows.message()), false;
    std::printf("\n### Compression: %s (%d layers, %d KV heads x %d, %d tokens, %zu blocks of %d)\n\n%s", title,
                cap.shape.n_layers, cap.shape.n_kv_heads, cap.shape.head_dim, cap.n_tokens,
                blocks->size() / cap.shape.block_floats(), cap.shape.block_tokens, format_codec_table(*rows).c_str());
    if (keep) *keep = *rows;
    return true;
}

void break_even(const std::vector<CodecRow>& rows) {
    const double block = double(kShape11B.block_bytes());
    const double recompute_flops = 2.0 * kParams11B * kShape11B.block_tokens;  // weights only, attention excluded
    std::printf(
        "\n### Break-even, 1.1B shape (block %.0f KiB FP32; recompute = 2 x %.2g params x %d tokens = %.3g FLOP)\n\n",
        block / 1024, kParams11B, kShape11B.block_tokens, recompute_flops);
    std::printf(
        "| codec | fetch: link 10 GB/s + decode (us) | recompute @ 1 TFLOP/s (us) | @ 5 TFLOP/s | @ 20 TFLOP/s | "
        "decode GB/s needed to tie @ 20 TFLOP/s |\n");
    std::printf("|---|---:|---:|---:|---:|---:|\n");
    for (const CodecRow& r : rows) {
        const double link = block / r.ratio / 10e9, dec = block / (r.decode_gbps * 1e9);
        const double t20 = recompute_flops / 20e12;
        const double need = t20 > link ? block / (t20 - link) / 1e9 : -1;
        std::printf("| %s | %.1f | %.0f | %.0f | %.0f | %s |\n", codec_name(r.codec).c_str(), (link + dec) * 1e6,
                    recompute_flops / 1e12 * 1e6, recompute_flops / 5e12 * 1e6, t20 * 1e6,
                    need > 0 ? std::to_string(need).substr(0, 5).c_str() : "never");
    }
}

}  // namespace

int main(int argc, char** argv) {
    std::string traces_dir, write_dir, dump;
    int repeats = 5;
    double device_fraction = 0.15;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
        const char* v = nullptr;
        if ((a == "--traces" || a == "--write-traces" || a == "--kv-dump" || a == "--repeats" ||
             a == "--device-fraction") &&
            !(v = next()))
            return fail("missing value after " + a);
        if (a == "--traces")
            traces_dir = v;
        else if (a == "--write-traces")
            write_dir = v;
        else if (a == "--kv-dump")
            dump = v;
        else if (a == "--repeats")
            repeats = std::max(1, std::atoi(v));
        else if (a == "--device-fraction")
            device_fraction = std::atof(v);
        else
            return fail("unknown option " + a +
                        " (--traces DIR, --write-traces DIR, --kv-dump FILE, --repeats N, --device-fraction F)");
    }

    std::vector<Trace> traces = all_generated_traces();
    if (!write_dir.empty()) {
        for (const Trace& t : traces) {
            auto s = write_trace(t, write_dir + "/" + t.name + ".trace");
            if (!s) return fail(s.message());
        }
        std::printf("wrote %zu traces to %s\n", traces.size(), write_dir.c_str());
    }
    if (!traces_dir.empty())
        for (Trace& t : traces) {
            auto r = read_trace(traces_dir + "/" + t.name + ".trace");
            if (!r) return fail(r.message());
            t = std::move(r.value());
        }

    // waste and sharing
    auto w = measure_waste(kShape11B, MixedWorkload{});
    if (!w) return fail(w.message());
    std::printf(
        "### KV waste, mixed workload (256 requests, 32 at once, prompts 16-1024, outputs 16-512, blocks of 16)\n\n");
    std::printf("| allocation | waste | peak KV (1.1B shape, FP32) |\n|---|---:|---:|\n");
    std::printf("| paged | %.2f%% | %.0f MiB |\n| contiguous max-length | %.2f%% | %.0f MiB |\n", 100 * w->paged_waste,
                double(w->paged_peak_bytes) / 1048576.0, 100 * w->contiguous_waste,
                double(w->contiguous_peak_bytes) / 1048576.0);
    auto sh = measure_prefix_sharing(kShape11B, 64, 512, 128, 7);
    if (!sh) return fail(sh.message());
    std::printf(
        "\nPrefix sharing, 64 requests x (512-token system prompt + 128 own): %lld blocks unshared, %lld shared "
        "(%.1f%% saved)\n",
        (long long)sh->blocks_unshared, (long long)sh->blocks_shared, 100 * sh->saving());

    // compression
    std::vector<CodecRow> rows11b;
    if (!dump.empty()) {
        auto cap = read_kv_dump(dump, 16);
        if (!cap) return fail(cap.message());
        if (!codec_table(("captured K/V from " + dump).c_str(), *cap, repeats, nullptr)) return 1;
    }
    if (!codec_table("synthetic K/V, stories260K shape", synthetic_capture(kShape260K, 512, 11), repeats, nullptr))
        return 1;
    if (!codec_table("synthetic K/V, 1.1B shape", synthetic_capture(kShape11B, 512, 12), repeats, &rows11b)) return 1;
    break_even(rows11b);

    // policies: the host tier holds INT8 + delta + LZ4 blocks
    const uint64_t host_bytes = uint64_t(double(kShape11B.block_bytes()) / rows11b.back().ratio);
    auto table = policy_table(traces, kShape11B.block_bytes(), host_bytes, device_fraction);
    if (!table) return fail(table.message());
    std::printf("\n### Policies (1.1B-shape blocks, host tier INT8 + delta + LZ4 at %llu bytes/block)\n\n%s",
                (unsigned long long)host_bytes, format_policy_table(*table).c_str());
    return 0;
}
