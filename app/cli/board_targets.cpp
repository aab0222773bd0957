#include "app/cli/board_targets.h"

#include "app/cli/common.h"

namespace edge::cli {

using client::Board;

void add_board_options(CLI::App* c, BoardArgs& a, bool fleet_ok) {
    c->add_option("--board", a.board, "board: a name from --boards or ~/.ssh/config, or user@host[:port]");
    if (fleet_ok)
        c->add_option("--boards", a.boards_file,
                      "boards file (one 'NAME [user@]host[:port] [root=DIR] [identity=KEY]' a line); "
                      "without --board: every board in it, in parallel");
    c->add_option("--identity,-i", a.identity, "private key file (default: ssh-agent, ssh config, ~/.ssh keys)");
    c->add_option("--known-hosts", a.known_hosts, "known_hosts file (default ~/.ssh/known_hosts)");
    c->add_option("--ssh-config", a.ssh_config, "OpenSSH client config (default ~/.ssh/config)");
    c->add_option("--root", a.root,
                  std::string("board folder (absolute; default: the boards file's root=, else ") + kDefaultRoot + ")");
    c->add_flag("--accept-new-host-key", a.accept_new,
                "trust an unknown host key and remember it (a changed key is always refused)");
    c->add_option("--timeout", a.timeout_s, "connect timeout in seconds")->check(CLI::Range(1, 600));
    c->add_flag("--json", a.json, "machine-readable output");
}

Result<std::vector<Board>> target_boards(const BoardArgs& a) {
    std::vector<Board> known;
    if (!a.boards_file.empty()) {
        auto f = client::read_boards_file(a.boards_file);
        if (!f.ok()) return f.error();
        known = f.value();
    }
    if (a.board.empty()) {
        if (a.boards_file.empty())
            return err("no board given: --board NAME|user@host[:port], or --boards FILE for a fleet");
        if (known.empty()) return err(a.boards_file, ": lists no boards");
        return known;
    }
    for (auto& b : client::ssh_config_boards(a.ssh_config)) known.push_back(b);
    auto b = client::resolve_board(a.board, known);
    if (!b.ok()) return b.error();
    return std::vector<Board>{b.value()};
}

std::string root_of(const BoardArgs& a, const Board& b) {
    std::string r = !a.root.empty() ? a.root : !b.root.empty() ? b.root : kDefaultRoot;
    while (r.size() > 1 && r.back() == '/') r.pop_back();
    return r;
}

client::Connector connector(const BoardArgs& a, const Board& b) {
    client::SshOptions o;
    o.host = b.host;
    o.port = b.port;
    o.user = b.user;
    o.identity_file = !a.identity.empty() ? a.identity : b.identity;
    o.known_hosts = a.known_hosts;
    o.ssh_config = a.ssh_config;
    o.accept_unknown_host = a.accept_new;
    o.timeout_s = a.timeout_s;
    return [o]() { return client::SshSession::connect(o); };
}

std::string destination(const Board& b) {
    std::string d = (b.user.empty() ? "" : b.user + "@") + b.host;
    return b.port ? d + ":" + std::to_string(b.port) : d;
}

}  // namespace edge::cli
