// Chat-template lexer: Jinja2 source into tokens, with trim_blocks, lstrip_blocks and the `-`/`+`
// whitespace controls exactly as jinja2's lexer applies them. The parser is chat_template_parse.cpp.
#include <algorithm>
#include <cctype>
#include <cstring>

#include "engine/tokenizer/chat_template_impl.h"

namespace edge::tokenizer::jinja {
namespace {

bool py_space_at(std::string_view s, size_t k, size_t* len) {
    uint8_t c = uint8_t(s[k]);
    if (c < 0x80) {
        *len = 1;
        return (c >= 9 && c <= 13) || (c >= 0x1c && c <= 0x20);
    }
    size_t n = (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    if (k + n > s.size()) n = 1;
    *len = n;
    return is_py_space(s.substr(k, n));
}
// Length of the run of (Unicode) whitespace at k.
size_t space_run(std::string_view s, size_t k) {
    size_t start = k, len = 0;
    while (k < s.size() && py_space_at(s, k, &len)) k += len;
    return k - start;
}
std::string rstrip_space(std::string_view s) {
    auto cps = code_points(s);
    size_t e = cps.size();
    while (e > 0 && is_py_space(cps[e - 1])) --e;
    return e == 0 ? std::string() : std::string(s.substr(0, size_t(cps[e - 1].data() + cps[e - 1].size() - s.data())));
}

class Lexer {
public:
    Lexer(std::string_view src, const std::vector<size_t>& line_starts) : src_(src), lines_(line_starts) {}

    std::vector<Token> run() {
        size_t pos = 0;
        bool line_starting = true;
        const size_t n = src_.size();
        while (pos < n) {
            size_t m = pos;
            while (m + 1 < n && !(src_[m] == '{' && (src_[m + 1] == '{' || src_[m + 1] == '%' || src_[m + 1] == '#')))
                ++m;
            if (m + 1 >= n) {
                push(Tok::Data, std::string(src_.substr(pos)), pos);
                break;
            }
            const char kind = src_[m + 1];
            char sign = (m + 2 < n && (src_[m + 2] == '-' || src_[m + 2] == '+')) ? src_[m + 2] : 0;
            size_t raw_end = kind == '%' ? match_raw_begin(m + 2 + (sign ? 1 : 0)) : 0;
            push(Tok::Data, strip_before(src_.substr(pos, m - pos), sign, kind != '{', line_starting), pos);
            size_t after = m + 2 + (sign ? 1 : 0);
            if (raw_end) {
                lex_raw(m, raw_end, pos, line_starting);
                continue;
            }
            if (kind == '#') {
                size_t p = after;
                size_t end = 0;
                for (; p + 1 < n; ++p) {
                    if (src_[p] == '+' && p + 2 < n && src_[p + 1] == '#' && src_[p + 2] == '}') {
                        end = p + 3;
                    } else if (src_[p] == '-' && p + 2 < n && src_[p + 1] == '#' && src_[p + 2] == '}') {
                        end = p + 3 + space_run(src_, p + 3);
                    } else if (src_[p] == '#' && src_[p + 1] == '}') {
                        end = p + 2 + ((p + 2 < n && src_[p + 2] == '\n') ? 1 : 0);
                    }
                    if (end) break;
                }
                if (!end) error(m, "unclosed comment: '{#' has no matching '#}'");
                line_starting = src_[end - 1] == '\n';
                pos = end;
                continue;
            }
            push(kind == '{' ? Tok::VarBegin : Tok::BlockBegin, "", m);
            pos = lex_tag(m, after, kind == '%', &line_starting);
        }
        push(Tok::End, "", n);
        return std::move(toks_);
    }

private:
    [[noreturn]] void error(size_t off, const std::string& msg) { fail_at(pos_at(src_, lines_, off), msg); }
    void push(Tok t, std::string text, size_t off) {
        if (t == Tok::Data && text.empty()) return;
        toks_.push_back(Token{t, std::move(text), off});
    }

    // The text before a tag, after `-` (strip all whitespace) or lstrip_blocks (strip spaces
    // between the last newline and a block or comment tag) — jinja2's OptionalLStrip rule.
    static std::string strip_before(std::string_view text, char sign, bool block_or_comment, bool line_starting) {
        if (sign == '-') return rstrip_space(text);
        if (sign == '+' || !block_or_comment) return std::string(text);
        size_t nl = text.rfind('\n');
        size_t l_pos = nl == std::string_view::npos ? 0 : nl + 1;
        if ((l_pos > 0 || line_starting) && l_pos < text.size() && space_run(text, l_pos) == text.size() - l_pos)
            return std::string(text.substr(0, l_pos));
        return std::string(text);
    }

    // `{%[-+]? raw ... %}` starting after the sign: the offset just past the tag, or 0.
    size_t match_raw_begin(size_t p) const {
        p += space_run(src_, p);
        if (src_.substr(p, 3) != "raw") return 0;
        p += 3;
        p += space_run(src_, p);
        if (src_.substr(p, 3) == "-%}") return p + 3 + space_run(src_, p + 3);
        if (src_.substr(p, 2) == "%}") return p + 2;
        return 0;
    }

    // A block tag's end at p (`+%}`, `-%}` eating the whitespace after it, `%}` eating one
    // newline under trim_blocks): the offset just past what it consumes, or 0.
    size_t block_end_at(size_t p) const {
        if (src_.substr(p, 3) == "+%}") return p + 3;
        if (src_.substr(p, 3) == "-%}") return p + 3 + space_run(src_, p + 3);
        if (src_.substr(p, 2) == "%}") return p + 2 + ((p + 2 < src_.size() && src_[p + 2] == '\n') ? 1 : 0);
        return 0;
    }

    void lex_raw(size_t tag_start, size_t body, size_t& pos, bool& line_starting) {
        const size_t n = src_.size();
        bool body_line_start = src_[body - 1] == '\n';
        for (size_t p = body; p + 1 < n; ++p) {
            if (src_[p] != '{' || src_[p + 1] != '%') continue;
            size_t q = p + 2;
            char sign = (q < n && (src_[q] == '-' || src_[q] == '+')) ? src_[q] : 0;
            if (sign) ++q;
            q += space_run(src_, q);
            if (src_.substr(q, 6) != "endraw") continue;
            q += 6;
            q += space_run(src_, q);
            const size_t end = block_end_at(q);
            if (!end) continue;
            push(Tok::Data, strip_before(src_.substr(body, p - body), sign, true, body_line_start), body);
            line_starting = src_[end - 1] == '\n';
            pos = end;
            return;
        }
        error(tag_start, "unclosed raw block: '{% raw %}' has no matching '{% endraw %}'");
    }

    // Tokens inside `{{ ... }}` or `{% ... %}`; returns the offset past the closing tag.
    size_t lex_tag(size_t tag_start, size_t p, bool block, bool* line_starting) {
        const size_t n = src_.size();
        std::string stack;
        while (true) {
            if (stack.empty()) {
                size_t end = 0;
                if (block) {
                    end = block_end_at(p);
                } else {
                    if (src_.substr(p, 3) == "-}}") {
                        end = p + 3 + space_run(src_, p + 3);
                    } else if (src_.substr(p, 2) == "}}") {
                        end = p + 2;
                    }
                }
                if (end) {
                    push(block ? Tok::BlockEnd : Tok::VarEnd, "", p);
                    *line_starting = src_[end - 1] == '\n';
                    return end;
                }
            }
            if (p >= n)
                error(tag_start, std::string("unclosed tag: '") + (block ? "{%" : "{{") + "' has no matching '" +
                                     (block ? "%}" : "}}") + "'");
            size_t ws = space_run(src_, p);
            if (ws) {
                p += ws;
                continue;
            }
            const char c = src_[p];
            if (std::isdigit(uint8_t(c))) {
                p = lex_number(p);
                continue;
            }
            if (std::isalpha(uint8_t(c)) || c == '_') {
                size_t e = p;
                while (e < n && (std::isalnum(uint8_t(src_[e])) || src_[e] == '_')) ++e;
                push(Tok::Name, std::string(src_.substr(p, e - p)), p);
                p = e;
                continue;
            }
            if (c == '\'' || c == '"') {
                p = lex_string(p);
                continue;
            }
            static const char* kOps[] = {"//", "**", "==", "!=", ">=", "<=", "+", "-", "/", "*", "%", "~", "[", "]",
                                         "(",  ")",  "{",  "}",  "==", ">",  "<", "=", ".", ":", "|", ",", ";"};
            std::string op;
            for (const char* o : kOps)
                if (src_.substr(p, std::strlen(o)) == o) {
                    op = o;
                    break;
                }
            if (op.empty()) error(p, "unexpected character " + excerpt(src_.substr(p, 1)) + " in a tag");
            if (op == "(" || op == "[" || op == "{") {
                if (stack.size() >= size_t(kMaxParseDepth))
                    error(p, "brackets nest more than " + std::to_string(kMaxParseDepth) + " levels deep in a tag");
                stack += op[0];
            } else if (op == ")" || op == "]" || op == "}") {
                const char open = op == ")" ? '(' : op == "]" ? '[' : '{';
                if (stack.empty() || stack.back() != open) error(p, "unexpected '" + op + "'");
                stack.pop_back();
            }
            push(Tok::Op, op, p);
            p += op.size();
        }
    }

    size_t lex_number(size_t p) {
        const size_t n = src_.size();
        auto digits = [&](size_t q) {  // (\d+_)*\d+ ; returns end or q when none
            size_t e = q;
            while (e < n && std::isdigit(uint8_t(src_[e]))) {
                while (e < n && std::isdigit(uint8_t(src_[e]))) ++e;
                if (e + 1 < n && src_[e] == '_' && std::isdigit(uint8_t(src_[e + 1]))) ++e;
            }
            return e;
        };
        size_t e = digits(p);
        bool is_float = false;
        const bool after_dot = p > 0 && src_[p - 1] == '.';
        if (!after_dot) {
            size_t f = e;
            if (f + 1 < n && src_[f] == '.' && std::isdigit(uint8_t(src_[f + 1]))) {
                f = digits(f + 1);
                is_float = true;
            }
            if (f < n && (src_[f] == 'e' || src_[f] == 'E')) {
                size_t x = f + 1;
                if (x < n && (src_[x] == '+' || src_[x] == '-')) ++x;
                if (x < n && std::isdigit(uint8_t(src_[x]))) {
                    f = digits(x);
                    is_float = true;
                }
            }
            if (is_float) e = f;
        }
        std::string text;
        for (size_t k = p; k < e; ++k)
            if (src_[k] != '_') text += src_[k];
        push(is_float ? Tok::Float : Tok::Int, text, p);
        return e;
    }

    // A quoted string with Python's escapes (unknown escapes are kept as written).
    size_t lex_string(size_t p) {
        const size_t n = src_.size();
        const char q = src_[p];
        std::string out;
        size_t k = p + 1;
        while (true) {
            if (k >= n) error(p, "unterminated string literal " + excerpt(src_.substr(p, 40)));
            char c = src_[k];
            if (c == q) break;
            if (c != '\\') {
                out += c;
                ++k;
                continue;
            }
            if (k + 1 >= n) error(p, "unterminated string literal " + excerpt(src_.substr(p, 40)));
            char e = src_[k + 1];
            k += 2;
            auto hex = [&](int count) {
                uint32_t v = 0;
                for (int j = 0; j < count; ++j) {
                    if (k >= n || !std::isxdigit(uint8_t(src_[k])))
                        error(k, "bad \\x, \\u or \\U escape in a string literal");
                    char h = src_[k++];
                    v = v * 16 + uint32_t(std::isdigit(uint8_t(h)) ? h - '0' : (std::tolower(h) - 'a' + 10));
                }
                return v;
            };
            switch (e) {
                case '\\': out += '\\'; break;
                case '\'': out += '\''; break;
                case '"': out += '"'; break;
                case 'n': out += '\n'; break;
                case 't': out += '\t'; break;
                case 'r': out += '\r'; break;
                case 'a': out += '\a'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'v': out += '\v'; break;
                case '\n': break;
                case 'x': append_utf8(out, hex(2)); break;
                case 'u': append_utf8(out, hex(4)); break;
                case 'U': {
                    uint32_t v = hex(8);
                    if (v > 0x10ffff) error(k, "\\U escape out of range");
                    append_utf8(out, v);
                    break;
                }
                default:
                    if (e >= '0' && e <= '7') {
                        uint32_t v = uint32_t(e - '0');
                        for (int j = 0; j < 2 && k < n && src_[k] >= '0' && src_[k] <= '7'; ++j)
                            v = v * 8 + uint32_t(src_[k++] - '0');
                        append_utf8(out, v);
                    } else {
                        out += '\\';
                        out += e;
                    }
            }
        }
        push(Tok::String, std::move(out), p);
        return k + 1;
    }

    std::string_view src_;
    const std::vector<size_t>& lines_;
    std::vector<Token> toks_;
};

}  // namespace

Pos pos_at(std::string_view src, const std::vector<size_t>& line_starts, size_t off) {
    auto it = std::upper_bound(line_starts.begin(), line_starts.end(), off);
    size_t line = size_t(it - line_starts.begin());
    size_t start = line_starts[line - 1];
    return Pos{int(line), int(code_points(src.substr(start, off - start)).size()) + 1};
}

std::vector<Token> lex(std::string_view src, const std::vector<size_t>& line_starts) {
    Lexer lexer(src, line_starts);
    return lexer.run();
}

}  // namespace edge::tokenizer::jinja
