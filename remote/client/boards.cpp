#include "remote/client/boards.h"

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace edge::client {
namespace {

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

bool parse_port(const std::string& s, int& port) {
    if (s.empty() || s.size() > 5) return false;
    int v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return false;
        v = v * 10 + (c - '0');
    }
    if (v < 1 || v > 65535) return false;
    port = v;
    return true;
}

// Words separated by blanks; a double-quoted part of a word keeps its blanks (quotes dropped).
Result<std::vector<std::string>> split_words(const std::string& line) {
    std::vector<std::string> out;
    std::string cur;
    bool in_word = false, quoted = false;
    for (char c : line) {
        if (c == '"') {
            quoted = !quoted;
            in_word = true;
        } else if (!quoted && (c == ' ' || c == '\t' || c == '\r')) {
            if (in_word) out.push_back(cur);
            cur.clear();
            in_word = false;
        } else {
            cur += c;
            in_word = true;
        }
    }
    if (quoted) return err("a double quote is not closed");
    if (in_word) out.push_back(cur);
    return out;
}

}  // namespace

std::string expand_home(const std::string& p) {
    if (p.rfind("~/", 0) != 0) return p;
    const char* home = std::getenv("HOME");
    return std::string(home ? home : "") + p.substr(1);
}

Result<Board> parse_destination(const std::string& text) {
    Board b;
    b.source = "command line";
    std::string rest = text;
    if (auto at = rest.rfind('@'); at != std::string::npos) {
        b.user = rest.substr(0, at);
        rest = rest.substr(at + 1);
        if (b.user.empty()) return err("board '", text, "': empty user before '@'");
    }
    if (!rest.empty() && rest[0] == '[') {  // [v6addr]:port
        auto close = rest.find(']');
        if (close == std::string::npos) return err("board '", text, "': missing ']'");
        b.host = rest.substr(1, close - 1);
        std::string tail = rest.substr(close + 1);
        if (!tail.empty() && (tail[0] != ':' || !parse_port(tail.substr(1), b.port)))
            return err("board '", text, "': bad port '", tail, "'");
    } else if (auto colon = rest.find(':'); colon != std::string::npos) {
        b.host = rest.substr(0, colon);
        if (!parse_port(rest.substr(colon + 1), b.port))
            return err("board '", text, "': bad port '", rest.substr(colon + 1), "' (1..65535)");
    } else {
        b.host = rest;
    }
    if (b.host.empty()) return err("board '", text, "': no host");
    for (char c : b.host)
        if (std::isspace(static_cast<unsigned char>(c)) || c == '/' || c == '@')
            return err("board '", text, "': bad host name '", b.host, "'");
    b.name = text;
    return b;
}

Result<std::vector<Board>> read_boards_file(const std::string& path) {
    std::ifstream f(path);
    if (!f) return err(path, ": cannot open the boards file");
    std::vector<Board> out;
    std::string line;
    for (int no = 1; std::getline(f, line); ++no) {
        if (auto h = line.find('#'); h != std::string::npos) line.erase(h);
        auto words = split_words(line);
        if (!words.ok()) return err(path, ":", no, ": ", words.message());
        const std::vector<std::string>& w = words.value();
        if (w.empty()) continue;
        if (w[0].empty()) return err(path, ":", no, ": the board name is empty (a name comes first on each line)");
        Board b;
        size_t opt = 1;
        if (w.size() > 1 && w[1].find('=') == std::string::npos) {
            auto d = parse_destination(w[1]);
            if (!d.ok()) return err(path, ":", no, ": ", d.message());
            b = d.value();
            opt = 2;
        } else {
            b.host = w[0];  // an ssh config alias
        }
        b.name = w[0];
        b.source = path + ":" + std::to_string(no);
        for (size_t i = opt; i < w.size(); ++i) {
            auto eq = w[i].find('=');
            std::string k = eq == std::string::npos ? w[i] : w[i].substr(0, eq),
                        v = eq == std::string::npos ? "" : w[i].substr(eq + 1);
            if (k == "root" && !v.empty() && v[0] == '/')
                b.root = v;
            else if (k == "identity" && !v.empty())
                b.identity = expand_home(v);
            else if (k == "launcher" && !v.empty())
                b.launcher = v;
            else
                return err(path, ":", no, ": unknown or bad option '", w[i],
                           "' (root=/ABS/DIR, identity=FILE, launcher=\"PREFIX\")");
        }
        for (const auto& o : out)
            if (o.name == b.name)
                return err(path, ":", no, ": board '", b.name, "' is listed twice (first at ", o.source, ")");
        out.push_back(std::move(b));
    }
    return out;
}

std::vector<Board> ssh_config_boards(const std::string& path_in) {
    std::string path = path_in.empty() ? expand_home("~/.ssh/config") : path_in;
    std::ifstream f(path);
    std::vector<Board> out;
    std::vector<size_t> open;  // boards the current Host block applies to
    std::string line;
    for (int no = 1; std::getline(f, line); ++no) {
        if (auto h = line.find('#'); h != std::string::npos) line.erase(h);
        for (char& c : line)
            if (c == '=') c = ' ';
        std::istringstream ss(line);
        std::string key;
        if (!(ss >> key)) continue;
        key = lower(key);
        std::vector<std::string> v;
        for (std::string x; ss >> x;) v.push_back(x);
        if (key == "host" || key == "match") {
            open.clear();
            if (key == "match") continue;
            for (const auto& name : v) {
                if (name.find_first_of("*?!") != std::string::npos) continue;
                Board b;
                b.name = b.host = name;
                b.source = path + ":" + std::to_string(no);
                open.push_back(out.size());
                out.push_back(std::move(b));
            }
        } else if (!v.empty()) {
            for (size_t i : open) {
                Board& b = out[i];
                if (key == "user" && b.user.empty())
                    b.user = v[0];
                else if (key == "port" && b.port == 0)
                    parse_port(v[0], b.port);
                else if (key == "identityfile" && b.identity.empty())
                    b.identity = expand_home(v[0]);
            }
        }
    }
    return out;
}

Result<Board> resolve_board(const std::string& text, const std::vector<Board>& known) {
    if (text.empty()) return err("no board given (--board NAME|user@host[:port], or --boards FILE)");
    for (const auto& b : known)
        if (b.name == text) return b;
    if (text.find_first_of("@:[") != std::string::npos) return parse_destination(text);
    Board b;
    b.name = b.host = text;  // resolved by ssh config at connect, like `ssh NAME`
    b.source = "command line";
    return b;
}

}  // namespace edge::client
