// What the CLI and the studio both need to run edge-agent on a board, in one place (namespace
// edge::client, as the folder says; the older files here are still edge::client): the board's
// architecture (`uname -m` over SSH), the edge-agent binary built for it (checked by its ELF
// header, found next to the front end or given), the engine of the live version (read from its
// SHA256SUMS) and the agent's command line (with the board's launcher, e.g. qemu-user on an
// emulated board, or `nice -n -5`).
//
// Where agents are looked for, relative to the front end's own folder (SELF):
//   host architecture:  SELF/edge-agent, SELF/../../remote/edge-agent (the build tree),
//                       SELF/../lib/edgestudio/edge-agent (installed)
//   aarch64 (cross):    SELF/../../aarch64/remote/edge-agent (the build's aarch64 sub-build,
//                       cmake/cross.cmake), SELF/../lib/edgestudio/aarch64/edge-agent
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/result.h"
#include "engine/runtime/cost_model.h"
#include "remote/client/deploy.h"
#include "remote/client/sha256_file.h"

namespace edge::client {

using client::DeployFile;
using client::Digest;
using client::SshSession;

// `uname -m` spelled the way this project names architectures: "x86_64" (amd64 too),
// "aarch64" (arm64 too); anything else unchanged (trimmed).
std::string normalize_arch(const std::string& uname_m);
// The architecture this program was built for.
std::string host_arch();
// The architecture of an ELF executable ("x86_64", "aarch64", "riscv64", ...); an error names the
// file when it is missing or not an ELF file.
Result<std::string> elf_arch(const std::string& path);
// `uname -m` on the board, normalized.
Result<std::string> board_arch(SshSession& s);

// The folder of the running program (/proc/self/exe's parent).
std::string self_dir();
// The places an agent for `arch` is looked for, in order (see the top of this file).
std::vector<std::string> agent_candidates(const std::string& arch, const std::string& self);
// The edge-agent for a board of `arch`: `given` when not empty (refused, naming both architectures,
// when it is built for another one), else the first candidate that is an ELF for `arch`. The error
// names the architecture, every place looked and how to build one.
Result<std::string> find_agent(const std::string& arch, const std::string& given, const std::string& self);

// DeployOptions::board_files for "the edge-agent for this board": asks the board's architecture and
// returns the agent (find_agent(arch, given, self)) as the version's executable "edge-agent";
// `chosen` (may be null) is told the agent's path and the architecture.
std::function<Result<std::vector<DeployFile>>(SshSession&)> agent_file(
    std::string given, std::string self, std::function<void(const std::string&, const std::string&)> chosen = {});

// The engine of the live version under `root`: the first entry of root/current/SHA256SUMS that is
// not the agent.
Result<std::pair<std::string, Digest>> live_engine(SshSession& s, const std::string& root);

struct AgentCommand {
    std::string root;      // the board folder (the agent runs root/current/edge-agent)
    std::string launcher;  // a shell prefix (the board's launcher=), "" for none
    int threads = 0;       // 0: the agent's default
    std::string backend, kv_budget;
    // Set: the agent measures the board's cost model on this engine of the live version and
    // prints it as JSON (edge-agent --micro-profile, engine/runtime/cost_model.h) instead of
    // speaking the protocol.
    std::string micro_profile_engine;
};
// The shell command line that starts the agent of the live version.
std::string agent_command_line(const AgentCommand& c);

// The board's decode cost model (engine/runtime/cost_model.h), measured by the live version's agent
// on its engine `engine_name` (c.micro_profile_engine is set to it): `edge-agent --micro-profile`
// through the board's launcher, its JSON read back. Errors name `board` and the step.
Result<runtime::BoardCostModel> measure_cost_model(SshSession& s, AgentCommand c, const std::string& engine_name,
                                                   const std::string& board);

}  // namespace edge::client
