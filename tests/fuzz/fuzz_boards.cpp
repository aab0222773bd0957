// libFuzzer target: the board lists of remote/client/boards.cpp from one text: the boards file
// (read_boards_file: words, quotes, destinations, options, duplicates) and the same bytes as an
// OpenSSH client config (ssh_config_boards); every board found is resolved by name again.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "fuzz_common.h"
#include "remote/client/boards.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size > (1u << 14)) return 0;  // a fleet file of a few hundred lines
    const std::string& path = edge::fuzz::write_input(data, size, ".boards");
    auto boards = edge::client::read_boards_file(path);
    if (boards.ok()) {
        for (const auto& b : *boards) {
            auto r = edge::client::resolve_board(b.name, *boards);
            if (!r.ok() || r->name != b.name) std::abort();  // a listed name resolves to itself
        }
    }
    const auto ssh = edge::client::ssh_config_boards(path);
    for (const auto& b : ssh) (void)edge::client::resolve_board(b.name, ssh);
    return 0;
}
