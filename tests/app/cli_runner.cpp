#include "cli_runner.h"

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "test_support.h"

namespace edge::test {

namespace {
std::string quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}
std::string slurp(const std::filesystem::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::ostringstream ss;
    ss << f.rdbuf();
    return ss.str();
}
}  // namespace

nlohmann::json CliRun::json() const { return nlohmann::json::parse(out, nullptr, /*allow_exceptions=*/false); }

CliRun run_cli(const std::vector<std::string>& args) {
    static const std::filesystem::path dir = temp_dir("cli");
    static int counter = 0;
    const auto out = dir / ("out" + std::to_string(counter) + ".txt");
    const auto err = dir / ("err" + std::to_string(counter++) + ".txt");
    std::string cmd = quote(EDGE_CLI_PATH);
    for (const auto& a : args) cmd += " " + quote(a);
    cmd += " </dev/null >" + quote(out.string()) + " 2>" + quote(err.string());
    const int status = std::system(cmd.c_str());
    CliRun r;
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
}

}  // namespace edge::test
