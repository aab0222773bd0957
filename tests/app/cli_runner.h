// Runs edgestudio-cli as a subprocess and captures its exit code, stdout and stderr.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace edge::test {

struct CliRun {
    int rc = -1;
    std::string out, err;
    // stdout parsed as JSON (null when it is not JSON)
    nlohmann::json json() const;
};

CliRun run_cli(const std::vector<std::string>& args);

}  // namespace edge::test
