// Calibration text kept apart from the evaluation text (calib.h: remove_evaluation_paragraphs).
#include <cctype>
#include <unordered_set>

#include "engine/model/xxh64.h"
#include "engine/quant/calib.h"

using edge::model::xxh64;

namespace edge::quant {
namespace {

bool blank(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// Whitespace runs as one space, trimmed.
std::string normalized(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    bool space = false;
    for (char c : s) {
        if (blank(c)) {
            space = !out.empty();
            continue;
        }
        if (space) out += ' ';
        space = false;
        out += c;
    }
    return out;
}

uint64_t hash_of(const std::string& s) { return xxh64(s.data(), s.size()); }

struct Paragraph {
    std::string_view text;
    size_t line = 1;  // 1-based line where it begins
};

// Blocks between blank lines (or <|endoftext|> markers); empty ones skipped.
std::vector<Paragraph> paragraphs(std::string_view text) {
    std::vector<Paragraph> out;
    size_t pos = 0, line = 1, start = 0, start_line = 1;
    bool open = false;
    auto close = [&](size_t end) {
        if (open) {
            std::string_view p = text.substr(start, end - start);
            while (!p.empty() && blank(p.front())) p.remove_prefix(1);
            while (!p.empty() && blank(p.back())) p.remove_suffix(1);
            if (!p.empty()) out.push_back({p, start_line});
        }
        open = false;
    };
    static constexpr std::string_view kEnd = "<|endoftext|>";
    while (pos <= text.size()) {
        const size_t eol = std::min(text.find('\n', pos), text.size());
        std::string_view l = text.substr(pos, eol - pos);
        for (size_t at; (at = l.find(kEnd)) != std::string_view::npos;) {  // a marker ends a paragraph
            if (!open && !normalized(l.substr(0, at)).empty()) {
                open = true;
                start = pos;
                start_line = line;
            }
            close(pos + at);
            pos += at + kEnd.size();
            l = text.substr(pos, eol - pos);
        }
        if (normalized(l).empty()) {
            close(pos);
        } else if (!open) {
            open = true;
            start = pos;
            start_line = line;
        }
        if (eol >= text.size()) {
            close(text.size());
            break;
        }
        pos = eol + 1;
        ++line;
    }
    return out;
}

constexpr size_t kMinLine = 20;  // shorter lines ("The end.") are too common to mean shared text

template <class Fn>
void each_line(std::string_view p, Fn fn) {
    size_t pos = 0;
    while (pos <= p.size()) {
        const size_t eol = std::min(p.find('\n', pos), p.size());
        const std::string n = normalized(p.substr(pos, eol - pos));
        if (n.size() >= kMinLine) fn(n);
        if (eol >= p.size()) break;
        pos = eol + 1;
    }
}

}  // namespace

DisjointCalib remove_evaluation_paragraphs(std::string_view calibration, std::string_view evaluation) {
    std::unordered_set<uint64_t> whole, lines;
    for (const Paragraph& p : paragraphs(evaluation)) {
        whole.insert(hash_of(normalized(p.text)));
        each_line(p.text, [&](const std::string& n) { lines.insert(hash_of(n)); });
    }
    DisjointCalib d;
    for (const Paragraph& p : paragraphs(calibration)) {
        ++d.paragraphs;
        bool shared = whole.count(hash_of(normalized(p.text))) > 0;
        if (!shared) each_line(p.text, [&](const std::string& n) { shared = shared || lines.count(hash_of(n)) > 0; });
        if (shared) {
            ++d.removed;
            d.lines.push_back(p.line);
            continue;
        }
        if (!d.text.empty()) d.text += "\n\n";
        d.text.append(p.text.data(), p.text.size());
    }
    return d;
}

std::string describe(const DisjointCalib& d) {
    std::string s =
        "kept " + std::to_string(d.paragraphs - d.removed) + " of " + std::to_string(d.paragraphs) + " paragraphs";
    if (d.removed == 0) return s + "; none is in the evaluation text";
    s += "; " + std::to_string(d.removed) +
         (d.removed == 1 ? " also in the evaluation text was" : " also in the evaluation text were") + " removed (line";
    s += d.lines.size() == 1 ? " " : "s ";
    for (size_t i = 0; i < d.lines.size() && i < 8; ++i) s += (i ? ", " : "") + std::to_string(d.lines[i]);
    if (d.lines.size() > 8) s += ", ...";
    return s + ")";
}

}  // namespace edge::quant
