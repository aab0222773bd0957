// Boards the studio knows: Host entries of ~/.ssh/config (aliases with HostName, User, Port,
// IdentityFile; wildcard patterns skipped) and a boards file for fleets, one board a line:
//
//   # name      destination              options (all optional)
//   orin-01     nvidia@10.0.0.21         root=/opt/edgestudio identity=~/.ssh/orin
//   orin-02     nvidia@10.0.0.22:2222    launcher="nice -n -5"
//   lab-alias                            (no destination: the name is an ~/.ssh/config alias)
//
// A destination is [user@]host[:port] (IPv6: [addr]:port). An option value may be double-quoted
// to hold spaces. launcher= is a shell prefix the agent is started under on that board (an
// emulated board: launcher="qemu-aarch64 -L /usr/aarch64-linux-gnu"). Errors name the file and line.
#pragma once
#include <string>
#include <vector>

#include "engine/core/result.h"

namespace edge::client {

struct Board {
    std::string name;      // what the user calls it
    std::string host;      // passed to ssh (an alias is resolved by ~/.ssh/config at connect)
    std::string user;      // "": from ssh config / local user
    int port = 0;          // 0: from ssh config / 22
    std::string identity;  // "": ssh-agent / ssh config / default keys
    std::string root;      // "": the default board folder
    std::string launcher;  // "": the agent runs directly
    std::string source;    // "ssh config", "FILE:LINE" or "command line"
};

// "[user@]host[:port]"; an error names the text.
Result<Board> parse_destination(const std::string& text);
Result<std::vector<Board>> read_boards_file(const std::string& path);
// Host entries of an OpenSSH client config (path "" = ~/.ssh/config; a missing file: none).
std::vector<Board> ssh_config_boards(const std::string& path);
// NAME from the boards (by name), else a destination (has '@' or ':'), else an ssh alias/host.
Result<Board> resolve_board(const std::string& text, const std::vector<Board>& known);
// "~/x" -> "$HOME/x".
std::string expand_home(const std::string& path);

}  // namespace edge::client
