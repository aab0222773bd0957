#include "backend.h"

#include <algorithm>

#include "device.h"
#include "engine/runtime/cpu/cpu_backend.h"

#ifdef EDGE_HAVE_CUDA
#include "cuda/cuda_backend.h"
#endif

namespace edge::runtime {

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

Result<std::unique_ptr<Backend>> make_backend(const std::string& kind, std::string* why) {
    if (kind == "cpu") return make_cpu_backend();
    if (kind != "cuda" && kind != "auto") return err("unknown backend '", kind, "' (expected cpu, cuda or auto)");
    const DeviceReport d = probe_devices();
    if (d.cuda_usable) {
#ifdef EDGE_HAVE_CUDA
        return cuda::make_cuda_backend();
#endif
    }
    const std::string reason = d.reason.empty() ? std::string("no usable CUDA device") : d.reason;
    if (kind == "cuda") return err("cuda backend unavailable: ", reason);
    if (why) *why = "using the CPU backend: " + reason;
    return make_cpu_backend();
}

Status run_in_chunks(const char* who, const int32_t* tokens, int n, int pos, int max_seq, int chunk_tokens, int vocab,
                     float* all_logits, const ChunkRunner& chunk) {
    if (n <= 0) return err(who, ": nothing to run (", n, " tokens)");
    if (pos < 0 || pos + n > max_seq)
        return err(who, ": positions ", pos, "..", pos + n - 1, " run past the KV cache (", max_seq, " positions)");
    const int step = std::max(1, chunk_tokens);
    for (int done = 0; done < n;) {
        const int m = std::min(step, n - done);
        EDGE_TRY(chunk(tokens + done, m, pos + done, all_logits ? all_logits + size_t(done) * size_t(vocab) : nullptr));
        done += m;
    }
    return {};
}

}  // namespace edge::runtime
