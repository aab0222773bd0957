#include "remote/client/board_agent.h"

#include <elf.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "remote/client/ssh_session.h"

namespace edge::client {

namespace fs = std::filesystem;
using client::digest_from_hex;
using client::shell_quote;

namespace {

std::string trim(const std::string& s) {
    const size_t a = s.find_first_not_of(" \t\r\n"), b = s.find_last_not_of(" \t\r\n");
    return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}

}  // namespace

std::string normalize_arch(const std::string& uname_m) {
    std::string a = trim(uname_m);
    if (a == "amd64" || a == "x86-64") return "x86_64";
    if (a == "arm64" || a == "armv8" || a == "aarch64_be") return "aarch64";
    return a;
}

std::string host_arch() {
#if defined(__x86_64__)
    return "x86_64";
#elif defined(__aarch64__)
    return "aarch64";
#elif defined(__riscv) && __riscv_xlen == 64
    return "riscv64";
#else
    return "unknown";
#endif
}

Result<std::string> elf_arch(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return err(path, ": cannot open");
    unsigned char ident[EI_NIDENT] = {};
    if (!f.read(reinterpret_cast<char*>(ident), EI_NIDENT) || std::memcmp(ident, ELFMAG, SELFMAG) != 0)
        return err(path, ": not an ELF executable");
    // e_type (2 bytes) then e_machine (2 bytes), in the file's byte order, for 32- and 64-bit files.
    unsigned char rest[4] = {};
    if (!f.read(reinterpret_cast<char*>(rest), 4)) return err(path, ": ELF header cut short");
    const bool little = ident[EI_DATA] == ELFDATA2LSB;
    const unsigned machine = little ? unsigned(rest[2]) | unsigned(rest[3]) << 8 : unsigned(rest[2]) << 8 | rest[3];
    switch (machine) {
        case EM_X86_64: return std::string("x86_64");
        case EM_AARCH64: return std::string("aarch64");
        case EM_386: return std::string("i686");
        case EM_ARM: return std::string("armv7l");
        case EM_RISCV: return std::string(ident[EI_CLASS] == ELFCLASS64 ? "riscv64" : "riscv32");
        default: return "elf-machine-" + std::to_string(machine);
    }
}

Result<std::string> board_arch(SshSession& s) {
    auto out = s.exec_checked("uname -m", "asking the board for its architecture (uname -m)");
    if (!out.ok()) return out.error();
    const std::string a = normalize_arch(out.value());
    if (a.empty()) return err("ssh ", s.where(), ": uname -m printed nothing");
    return a;
}

std::string self_dir() {
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    return ec ? std::string(".") : exe.parent_path().string();
}

std::vector<std::string> agent_candidates(const std::string& arch, const std::string& self) {
    const fs::path s(self);
    std::vector<fs::path> c;
    if (arch == host_arch()) c = {s / "edge-agent", s / "../../remote/edge-agent", s / "../lib/edgestudio/edge-agent"};
    c.push_back(s / ("../../" + arch + "/remote/edge-agent"));
    c.push_back(s / ("../lib/edgestudio/" + arch + "/edge-agent"));
    std::vector<std::string> out;
    out.reserve(c.size());
    for (const auto& p : c) out.push_back(p.lexically_normal().string());
    return out;
}

Result<std::string> find_agent(const std::string& arch, const std::string& given, const std::string& self) {
    std::error_code ec;
    if (!given.empty()) {
        auto a = elf_arch(given);
        if (!a.ok()) return err("edge-agent ", a.message());
        if (a.value() != arch)
            return err("edge-agent ", given, " is built for ", a.value(), ", but the board is ", arch,
                       ": give the agent built for ", arch);
        return fs::weakly_canonical(given, ec).string();
    }
    std::string looked;
    for (const std::string& p : agent_candidates(arch, self)) {
        looked += "\n  " + p;
        if (!fs::is_regular_file(p, ec)) continue;
        auto a = elf_arch(p);
        if (a.ok() && a.value() == arch) return fs::weakly_canonical(p, ec).string();
        looked += a.ok() ? " (built for " + a.value() + ")" : " (not an ELF executable)";
    }
    std::string how = arch == "aarch64"
                          ? "build the edge_agent_aarch64 target (it needs g++-aarch64-linux-gnu, which "
                            "scripts/install-deps.sh installs; docs/cross.md), or build the agent on the board "
                            "(scripts/board-build.sh) and give it with --agent"
                          : "build an edge-agent for " + arch + " and give it with --agent";
    return err("no edge-agent for ", arch, " (the board's architecture) was found; looked in:", looked, "\n", how);
}

std::function<Result<std::vector<DeployFile>>(SshSession&)> agent_file(
    std::string given, std::string self, std::function<void(const std::string&, const std::string&)> chosen) {
    return [given = std::move(given), self = std::move(self),
            chosen = std::move(chosen)](SshSession& s) -> Result<std::vector<DeployFile>> {
        auto arch = board_arch(s);
        if (!arch.ok()) return arch.error();
        auto agent = find_agent(arch.value(), given, self);
        if (!agent.ok()) return agent.error();
        if (chosen) chosen(agent.value(), arch.value());
        return std::vector<DeployFile>{{agent.value(), "edge-agent", true}};
    };
}

Result<std::pair<std::string, Digest>> live_engine(SshSession& s, const std::string& root) {
    auto sums = s.exec_checked("cat -- " + shell_quote(root + "/current/SHA256SUMS"),
                               "reading the deployed version's SHA256SUMS (deploy an engine first)");
    if (!sums.ok()) return sums.error();
    std::istringstream in(sums.value());
    std::string hex, name;
    while (in >> hex >> name) {
        if (!name.empty() && name[0] == '*') name.erase(0, 1);
        if (name == "edge-agent") continue;
        auto d = digest_from_hex(hex);
        if (!d.ok()) return err("ssh ", s.where(), ": ", root, "/current/SHA256SUMS: ", d.message());
        return std::make_pair(name, d.value());
    }
    return err("ssh ", s.where(), ": ", root, "/current/SHA256SUMS lists no engine");
}

std::string agent_command_line(const AgentCommand& c) {
    const std::string cur = c.root + "/current";
    std::string cmd = c.launcher.empty() ? std::string() : c.launcher + " ";
    cmd += shell_quote(cur + "/edge-agent");
    if (!c.micro_profile_engine.empty()) {
        cmd += " --micro-profile " + shell_quote(cur + "/" + c.micro_profile_engine);
        if (c.threads > 0) cmd += " --threads " + std::to_string(c.threads);
        return cmd;
    }
    cmd += " --root " + shell_quote(cur) + " --lock " + shell_quote(c.root + "/agent.lock");
    if (c.threads > 0) cmd += " --threads " + std::to_string(c.threads);
    if (!c.backend.empty()) cmd += " --backend " + shell_quote(c.backend);
    if (!c.kv_budget.empty()) cmd += " --kv-budget " + shell_quote(c.kv_budget);
    return cmd;
}

Result<runtime::BoardCostModel> measure_cost_model(SshSession& s, AgentCommand c, const std::string& engine_name,
                                                   const std::string& board) {
    c.micro_profile_engine = engine_name;
    auto out = s.exec_checked(agent_command_line(c), "micro-profile", 600000);
    if (!out.ok()) return out.error();
    return runtime::cost_model_from_json(*out, "the micro-profile of " + board);
}

}  // namespace edge::client
