// Which boards a remote command addresses and how it reaches them (app/cli/cmd_remote.cpp's
// deploy, profile and boards): the --board/--boards/ssh options, the boards they name, each
// board's folder and SSH connector, and running a step on every board in parallel.
#pragma once
#include <CLI/CLI.hpp>

#include <string>
#include <thread>
#include <vector>

#include "engine/core/result.h"
#include "remote/client/boards.h"
#include "remote/client/deploy.h"
#include "remote/client/ssh_session.h"

namespace edge::cli {

inline constexpr const char* kDefaultRoot = "/opt/edgestudio";

struct BoardArgs {
    std::string board, boards_file, identity, known_hosts, ssh_config, root;
    bool accept_new = false;
    int timeout_s = 10;
    bool json = false;
};

void add_board_options(CLI::App* c, BoardArgs& a, bool fleet_ok = true);
// The boards a command addresses: --board (resolved against --boards and ssh config), else all
// of --boards.
Result<std::vector<client::Board>> target_boards(const BoardArgs& a);
std::string root_of(const BoardArgs& a, const client::Board& b);
client::Connector connector(const BoardArgs& a, const client::Board& b);
std::string destination(const client::Board& b);

// Runs fn for every board in parallel; results in board order.
template <class T, class Fn>
std::vector<Result<T>> for_each_board(const std::vector<client::Board>& boards, Fn fn) {
    std::vector<Result<T>> out(boards.size(), Result<T>(err("not run")));
    if (boards.size() == 1) {
        out[0] = fn(boards[0]);
        return out;
    }
    std::vector<std::thread> threads;
    for (size_t i = 0; i < boards.size(); ++i) threads.emplace_back([&, i] { out[i] = fn(boards[i]); });
    for (auto& t : threads) t.join();
    return out;
}

}  // namespace edge::cli
