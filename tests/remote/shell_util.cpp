// Running commands (edgestudio-cli, ansible-playbook, promtool) from the remote tests.
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>

#include "remote/client/ssh_session.h"
#include "remote_test_util.h"

namespace edge::test {

std::string read_file(const std::filesystem::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

std::string command_line(const std::string& exe, const std::vector<std::string>& args) {
    std::string cmd = client::shell_quote(exe);
    for (const auto& a : args) cmd += " " + client::shell_quote(a);
    return cmd;
}

Shell run_shell(const std::string& command, const std::filesystem::path& tmp) {
    std::filesystem::path errf = tmp / "shell-stderr.txt";
    std::string cmd = "(" + command + ") 2>" + client::shell_quote(errf.string()) + " </dev/null";
    Shell r;
    FILE* p = ::popen(cmd.c_str(), "r");
    if (!p) return r;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    int st = ::pclose(p);
    r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r.err = read_file(errf);
    return r;
}

}  // namespace edge::test
