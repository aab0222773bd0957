// The loopback sshd the client tests run against.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>
#include <vector>

#include "remote_test_util.h"
#include "test_support.h"

namespace edge::test {
namespace fs = std::filesystem;
namespace {

std::string read_all(const fs::path& p) {
    std::ifstream f(p);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

int free_port() {
    int s = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    int port = -1;
    if (::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
        ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) == 0)
        port = ntohs(a.sin_port);
    ::close(s);
    return port;
}

bool accepts(const std::string& address, int port) {
    int s = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    ::inet_pton(AF_INET, address.c_str(), &a.sin_addr);
    a.sin_port = htons(static_cast<uint16_t>(port));
    bool ok = ::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    ::close(s);
    return ok;
}

}  // namespace

std::string make_key(const fs::path& path) {
    fs::remove(path);
    fs::remove(path.string() + ".pub");
    std::string cmd =
        "ssh-keygen -q -t ed25519 -N '' -C edge-test -f '" + path.string() + "' </dev/null >/dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0) return "";
    std::string pub = read_all(path.string() + ".pub");
    while (!pub.empty() && (pub.back() == '\n' || pub.back() == '\r')) pub.pop_back();
    return pub;
}

std::unique_ptr<Sshd> Sshd::start_as_machine(std::string* why, const std::string& machine) {
    const fs::path bin = temp_dir("board-bin-" + machine);
    std::ofstream(bin / "uname") << "#!/bin/sh\n[ \"$1\" = -m ] && { echo " << machine
                                 << "; exit 0; }\nexec /usr/bin/uname \"$@\"\n";
    fs::permissions(bin / "uname", fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read);
    return start(why, "", "127.0.0.1", 0, "PATH=" + bin.string() + ":/usr/local/bin:/usr/bin:/bin");
}

std::unique_ptr<Sshd> Sshd::start(std::string* why, const std::string& netns, const std::string& address,
                                  int fixed_port, const std::string& session_env) {
    const char* sshd = "/usr/sbin/sshd";
    if (::access(sshd, X_OK) != 0) {
        *why = std::string(sshd) + " is missing (openssh-server; see scripts/install-deps.sh)";
        return nullptr;
    }
    auto d = std::unique_ptr<Sshd>(new Sshd);
    d->dir = temp_dir("sshd");
    d->address = address;
    passwd* pw = ::getpwuid(::getuid());
    d->user = pw ? pw->pw_name : "root";
    d->host_pub = make_key(d->dir / "host_key");
    std::string client_pub = make_key(d->dir / "client_key");
    if (d->host_pub.empty() || client_pub.empty()) {
        *why = "ssh-keygen failed";
        return nullptr;
    }
    d->client_key = (d->dir / "client_key").string();
    std::ofstream(d->dir / "authorized_keys") << client_pub << "\n";
    ::mkdir("/run/sshd", 0755);  // privilege separation folder (EEXIST is fine)
    // The board's home is its own folder, not this user's: a session's shell reads ~/.bashrc
    // (bash does when started by sshd), and a developer's (root's here runs `pyenv init`, whose
    // rehash waits up to 60 s on a lock that a killed session leaves behind) is not the board's.
    // sshd takes only the first SetEnv line, so every variable goes on this one.
    fs::create_directories(d->dir / "home");
    const std::string set_env =
        "SetEnv HOME=" + (d->dir / "home").string() + (session_env.empty() ? std::string() : " " + session_env) + "\n";
    for (int attempt = 0; attempt < 3; ++attempt) {
        d->port = fixed_port ? fixed_port : free_port();
        std::ofstream cfg(d->dir / "sshd_config");
        cfg << "Port " << d->port << "\nListenAddress " << address << "\n"
            << "HostKey " << (d->dir / "host_key").string() << "\n"
            << "PidFile " << (d->dir / "sshd.pid").string() << "\n"
            << "AuthorizedKeysFile " << (d->dir / "authorized_keys").string() << "\n"
            << "UsePAM no\nStrictModes no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
            << "PubkeyAuthentication yes\nPermitRootLogin prohibit-password\n"
            << "Subsystem sftp internal-sftp\nLogLevel VERBOSE\n"
            << set_env;
        cfg.close();
        pid_t pid = ::fork();
        if (pid == 0) {
            int fd = ::open((d->dir / "sshd.log").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
            ::dup2(fd, 1), ::dup2(fd, 2);
            std::string conf = (d->dir / "sshd_config").string();
            if (!netns.empty())  // `ip netns exec` enters the namespace and execs sshd: same PID
                ::execl("/usr/sbin/ip", "ip", "netns", "exec", netns.c_str(), sshd, "-D", "-e", "-f", conf.c_str(),
                        static_cast<char*>(nullptr));
            else
                ::execl(sshd, sshd, "-D", "-e", "-f", conf.c_str(), static_cast<char*>(nullptr));
            _exit(127);
        }
        d->pid_ = pid;
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (std::chrono::steady_clock::now() < deadline) {
            if (accepts(address, d->port)) return d;
            int st;
            if (::waitpid(pid, &st, WNOHANG) == pid) {
                d->pid_ = -1;
                break;  // exited (port taken?): try another port
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        if (d->pid_ > 0) {
            ::kill(d->pid_, SIGTERM);
            ::waitpid(d->pid_, nullptr, 0);
            d->pid_ = -1;
        }
    }
    *why = "sshd did not start; its log:\n" + d->log();
    return nullptr;
}

Sshd::~Sshd() {
    if (pid_ > 0) {
        ::kill(pid_, SIGTERM);  // the listener we started, by PID
        ::waitpid(pid_, nullptr, 0);
    }
}

namespace {
// Direct children of `parent` (from /proc/<pid>/stat's ppid field).
std::vector<pid_t> children_of(pid_t parent) {
    std::vector<pid_t> out;
    for (const auto& e : std::filesystem::directory_iterator("/proc")) {
        const std::string name = e.path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::ifstream f(e.path() / "stat");
        std::string stat((std::istreambuf_iterator<char>(f)), {});
        const size_t close = stat.rfind(')');  // the command name may hold spaces
        if (close == std::string::npos) continue;
        std::istringstream rest(stat.substr(close + 1));
        char state = 0;
        pid_t ppid = 0;
        if (rest >> state >> ppid && ppid == parent) out.push_back(pid_t(std::stol(name)));
    }
    return out;
}
}  // namespace

void Sshd::kill_with_sessions() {
    if (pid_ <= 0) return;
    // Every process the listener forked (its sessions and what they run), deepest last listed
    // first killed, then the listener: open connections drop at once.
    std::vector<pid_t> all{pid_};
    for (size_t i = 0; i < all.size(); ++i)
        for (pid_t c : children_of(all[i])) all.push_back(c);
    for (size_t i = all.size(); i-- > 1;) ::kill(all[i], SIGKILL);
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
}

std::string Sshd::known_hosts_line() const { return "[" + address + "]:" + std::to_string(port) + " " + host_pub; }

std::string Sshd::write_known_hosts() const {
    std::string path = (dir / "known_hosts").string();
    std::ofstream(path) << known_hosts_line() << "\n";
    return path;
}
std::string Sshd::log() const { return read_all(dir / "sshd.log"); }

}  // namespace edge::test
