#include "trace.h"

#include <charconv>
#include <fstream>
#include <sstream>

namespace edge::kv {

namespace {
constexpr uint64_t kMaxRange = 1 << 20;  // blocks in one range: more is a corrupt line

bool parse_u64(std::string_view s, uint64_t& v) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return ec == std::errc() && p == s.data() + s.size();
}
bool parse_range(std::string_view s, std::pair<uint64_t, uint64_t>& r) {
    const size_t dash = s.find('-');
    if (dash == std::string_view::npos) {
        if (!parse_u64(s, r.first)) return false;
        r.second = r.first;
        return true;
    }
    return parse_u64(s.substr(0, dash), r.first) && parse_u64(s.substr(dash + 1), r.second) && r.first <= r.second &&
           r.second - r.first < kMaxRange;
}
}  // namespace

Result<Trace> parse_trace(const std::string& text, const std::string& where) {
    std::istringstream in(text);
    std::string line;
    Trace t;
    int lineno = 0;
    bool header = false;
    while (std::getline(in, line)) {
        ++lineno;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty() || line[0] == '#') continue;
        std::istringstream ls(line);
        std::string tag;
        ls >> tag;
        auto bad = [&](const std::string& why) { return err(where, ":", lineno, ": ", why, ": '", line, "'"); };
        if (!header) {
            int v = 0;
            if (tag != "edge-kv-trace" || !(ls >> v))
                return bad("not an edge-kv-trace file (first line must be 'edge-kv-trace 1')");
            if (v != kTraceVersion)
                return bad("trace format version " + std::to_string(v) + " is not supported (this build reads 1)");
            header = true;
            continue;
        }
        if (tag == "name") {
            ls >> t.name;
            continue;
        }
        if (tag == "block_tokens") {
            if (!(ls >> t.block_tokens) || t.block_tokens <= 0 || t.block_tokens > 4096)
                return bad("block_tokens must be in [1, 4096]");
            continue;
        }
        TraceEvent e;
        if (tag == "s") {
            uint64_t turn = 0, rep = 0;
            std::string a, b;
            if (!(ls >> a >> b) || !parse_u64(a, turn) || !parse_u64(b, rep) || turn >= UINT32_MAX || rep == 0 ||
                rep > 1000000)
                return bad("a step needs a turn and a repeat count in [1, 1000000]");
            e.turn = uint32_t(turn);
            e.repeat = uint32_t(rep);
        } else if (tag == "f") {
            e.kind = TraceEvent::Free;
        } else {
            return bad("unknown record '" + tag + "' (expected s or f)");
        }
        std::string tok;
        while (ls >> tok) {
            std::pair<uint64_t, uint64_t> r;
            if (!parse_range(tok, r)) return bad("bad block range '" + tok + "'");
            e.ranges.push_back(r);
        }
        if (e.ranges.empty()) return bad("no blocks listed");
        t.events.push_back(std::move(e));
    }
    if (!header) return err(where, ": empty trace (no 'edge-kv-trace 1' line)");
    return t;
}

Result<Trace> read_trace(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return err(path, ": cannot open the trace");
    std::ostringstream ss;
    ss << f.rdbuf();
    return parse_trace(ss.str(), path);
}

std::string format_trace(const Trace& t) {
    std::ostringstream o;
    o << "edge-kv-trace " << kTraceVersion << "\nname " << (t.name.empty() ? "unnamed" : t.name) << "\nblock_tokens "
      << t.block_tokens << "\n";
    for (const TraceEvent& e : t.events) {
        if (e.kind == TraceEvent::Step)
            o << "s " << e.turn << ' ' << e.repeat;
        else
            o << 'f';
        for (auto [a, b] : e.ranges) {
            o << ' ' << a;
            if (b != a) o << '-' << b;
        }
        o << '\n';
    }
    return o.str();
}

Status write_trace(const Trace& t, const std::string& path) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    if (!f) return err(path, ": cannot write the trace");
    f << format_trace(t);
    if (!f) return err(path, ": write failed");
    return {};
}

}  // namespace edge::kv
