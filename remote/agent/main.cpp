// edge-agent: the board-side program. It speaks the EdgeStudio protocol on stdin/stdout, so it
// runs under an SSH exec channel and never opens a port. Diagnostics go to stderr.
#include <unistd.h>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "engine/runtime/cost_model.h"
#include "engine/telemetry/system_info.h"
#include "remote/agent/session.h"
#include "remote/protocol/handshake.h"

namespace {

void usage() {
    std::fprintf(stderr,
                 "usage: edge-agent [--root DIR] [--threads N] [--max-seq N] [--backend auto|cpu|cuda] [--lock FILE]\n"
                 "                  [--kv-budget BLOCKS|MiB] [--max-frame BYTES] [--sys DIR] [--proc DIR] [--version]\n"
                 "       edge-agent --micro-profile ENGINE [--threads N]\n"
                 "Speaks the EdgeStudio protocol (version %u) on stdin/stdout.\n"
                 "--micro-profile: measure this board's decode cost model on ENGINE (its time per token,\n"
                 "and one token's product with each of its linear shapes at fp32/fp16/int8/int4), print\n"
                 "it as JSON on stdout and exit (what deploy --cost-models runs; docs/remote.md).\n"
                 "--backend: what runs compiled engines (.edge); auto (default) = CUDA when a device\n"
                 "answers, else the CPU. Other model files run on the FP32 CPU executor.\n"
                 "--kv-budget: the KV pool serve-workload requests run in (\"4096\" blocks or \"512MiB\");\n"
                 "default: a quarter of the board's available memory, at most 1 GiB.\n",
                 edge::protocol::kProtocolVersion);
}

bool parse_int(const char* s, long long lo, long long hi, long long& out) {
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return false;
    out = v;
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    std::signal(SIGPIPE, SIG_IGN);  // a vanished client is a write error, not a kill
    edge::agent::SessionOptions opts;
    opts.lock_path = "/tmp/edge-agent-" + std::to_string(::getuid()) + ".lock";
    std::string micro_profile;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&]() -> const char* {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "edge-agent: %s needs a value\n", a.c_str());
                std::exit(64);
            }
            return argv[++i];
        };
        long long n = 0;
        if (a == "--version") {
            std::printf("edge-agent %s (protocol %u)\n", edge::agent::kAgentVersion, edge::protocol::kProtocolVersion);
            return 0;
        } else if (a == "--help" || a == "-h") {
            usage();
            return 0;
        } else if (a == "--root") {
            opts.worker.root = value();
        } else if (a == "--micro-profile") {
            micro_profile = value();
        } else if (a == "--lock") {
            opts.lock_path = value();
        } else if (a == "--sys") {
            opts.sys_root = value();
        } else if (a == "--proc") {
            opts.proc_root = value();
        } else if (a == "--threads" && parse_int(value(), 0, 1024, n)) {
            opts.worker.threads = static_cast<int>(n);
        } else if (a == "--max-seq" && parse_int(value(), 0, 1 << 20, n)) {
            opts.worker.max_seq = static_cast<int>(n);
        } else if (a == "--backend") {
            auto b = edge::runtime::parse_backend_choice(value());
            if (!b.ok()) {
                std::fprintf(stderr, "edge-agent: --backend: %s\n", b.message().c_str());
                return 64;
            }
            opts.worker.backend = b.value();
        } else if (a == "--kv-budget") {
            auto b = edge::agent::parse_kv_budget(value());
            if (!b.ok()) {
                std::fprintf(stderr, "edge-agent: %s\n", b.message().c_str());
                return 64;
            }
            opts.worker.kv_budget_blocks = b->first;
            opts.worker.kv_budget_mib = b->second;
        } else if (a == "--max-frame" && parse_int(value(), 1024, 1ll << 31, n)) {
            opts.max_frame = static_cast<uint32_t>(n);
        } else {
            std::fprintf(stderr, "edge-agent: bad argument '%s'\n", a.c_str());
            usage();
            return 64;
        }
    }
    if (!micro_profile.empty()) {
        edge::runtime::MicroProfileOptions mo;
        mo.threads = opts.worker.threads;
        auto cm = edge::runtime::micro_profile(micro_profile, mo);
        if (!cm.ok()) {
            std::fprintf(stderr, "edge-agent: micro-profile: %s\n", cm.message().c_str());
            return 1;
        }
        cm->cpu = edge::telemetry::cpu_model();
        std::fputs(edge::runtime::cost_model_to_json(*cm).c_str(), stdout);
        return 0;
    }
    // The protocol gets a private copy of stdout; fd 1 then points at stderr, so a stray printf
    // anywhere in the engine can never corrupt the frame stream.
    int proto_out = ::dup(STDOUT_FILENO);
    if (proto_out < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
        std::perror("edge-agent: dup");
        return edge::agent::kExitIoError;
    }
    return edge::agent::run_session(STDIN_FILENO, proto_out, opts);
}
