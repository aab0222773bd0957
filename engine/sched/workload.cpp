#include "workload.h"

#include <charconv>
#include <fstream>
#include <sstream>

namespace edge::sched {

namespace {

uint64_t mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

std::vector<std::string> split(const std::string& line) {
    std::vector<std::string> out;
    std::istringstream in(line);
    std::string w;
    while (in >> w) out.push_back(w);
    return out;
}

bool to_int(const std::string& s, int& v) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return ec == std::errc() && p == s.data() + s.size();
}

bool to_double(const std::string& s, double& v) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

Result<Workload> parse_workload(const std::string& text, const std::string& where) {
    Workload w;
    w.source = where;
    std::istringstream in(text);
    std::string line;
    int ln = 0;
    bool header = false;
    while (std::getline(in, line)) {
        ++ln;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        const auto f = split(line);
        if (f.empty() || f[0][0] == '#') continue;
        auto bad = [&](auto&&... m) { return err(where, ":", ln, ": ", m...); };
        if (!header) {
            int v = 0;
            if (f.size() != 2 || f[0] != "edge-workload" || !to_int(f[1], v))
                return bad("expected the header 'edge-workload ", kWorkloadVersion, "'");
            if (v != kWorkloadVersion)
                return bad("workload version ", f[1], " is not supported (only ", kWorkloadVersion, ")");
            header = true;
            continue;
        }
        if (f[0] == "prefix") {
            if (f.size() != 3) return bad("'prefix' takes a name and a token count, got ", f.size() - 1, " fields");
            WorkloadPrefix p{f[1], 0};
            if (!to_int(f[2], p.tokens) || p.tokens < 1 || p.tokens > kMaxWorkloadTokens)
                return bad("prefix '", f[1], "': token count '", f[2], "' is not in [1, ", kMaxWorkloadTokens, "]");
            for (const auto& q : w.prefixes)
                if (q.name == p.name) return bad("prefix '", p.name, "' is defined twice");
            w.prefixes.push_back(p);
        } else if (f[0] == "req") {
            if (f.size() != 5)
                return bad("'req' takes <arrival_ms> <prefix|-> <prompt_tokens> <output_tokens>, got ", f.size() - 1,
                           " fields");
            WorkloadRequest r;
            r.line = ln;
            if (!to_double(f[1], r.arrival_ms) || !(r.arrival_ms >= 0) || r.arrival_ms > 1e9)
                return bad("arrival time '", f[1], "' is not a number of milliseconds in [0, 1e9]");
            if (f[2] != "-") {
                for (size_t i = 0; i < w.prefixes.size(); ++i)
                    if (w.prefixes[i].name == f[2]) r.prefix = int(i);
                if (r.prefix < 0)
                    return bad("unknown prefix '", f[2], "' (define it with 'prefix <name> <tokens>' first)");
            }
            if (!to_int(f[3], r.prompt_tokens) || r.prompt_tokens < 0 || r.prompt_tokens > kMaxWorkloadTokens)
                return bad("prompt length '", f[3], "' is not in [0, ", kMaxWorkloadTokens, "]");
            if (r.prefix < 0 && r.prompt_tokens == 0)
                return bad("a request without a prefix needs at least one prompt token");
            if (!to_int(f[4], r.output_tokens) || r.output_tokens < 1 || r.output_tokens > kMaxWorkloadTokens)
                return bad("output length '", f[4], "' is not in [1, ", kMaxWorkloadTokens, "]");
            w.requests.push_back(r);
        } else {
            return bad("unknown line kind '", f[0], "' (expected 'prefix' or 'req')");
        }
    }
    if (!header) return err(where, ": empty file (expected the header 'edge-workload ", kWorkloadVersion, "')");
    if (w.requests.empty()) return err(where, ": no requests ('req' lines)");
    return w;
}

Result<Workload> read_workload(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return err(path, ": cannot open the workload file");
    std::ostringstream s;
    s << f.rdbuf();
    return parse_workload(s.str(), path);
}

std::vector<int32_t> prompt_tokens(const Workload& w, size_t i, int vocab) {
    const WorkloadRequest& r = w.requests[i];
    std::vector<int32_t> out;
    const uint64_t span = uint64_t(vocab > 1 ? vocab - 1 : 1);
    if (r.prefix >= 0) {
        const WorkloadPrefix& p = w.prefixes[size_t(r.prefix)];
        uint64_t h = 1469598103934665603ull;
        for (char c : p.name) h = (h ^ uint8_t(c)) * 1099511628211ull;
        for (int j = 0; j < p.tokens; ++j) out.push_back(int32_t(1 + mix(h + uint64_t(j)) % span));
    }
    for (int j = 0; j < r.prompt_tokens; ++j)
        out.push_back(int32_t(1 + mix((uint64_t(i + 1) << 32) ^ uint64_t(j) ^ 0x5bd1e995ull) % span));
    return out;
}

}  // namespace edge::sched
