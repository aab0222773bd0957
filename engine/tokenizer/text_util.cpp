#include "engine/tokenizer/text_util.h"

#include <array>

namespace edge::tokenizer {

size_t utf8_len(std::string_view s, size_t i) {
    const auto c = static_cast<uint8_t>(s[i]);
    size_t n = 1;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF)
        n = 3;
    else if (c >= 0xF0 && c <= 0xF4)
        n = 4;
    else
        return 1;
    if (i + n > s.size()) return 1;
    for (size_t k = 1; k < n; ++k)
        if ((static_cast<uint8_t>(s[i + k]) & 0xC0) != 0x80) return 1;
    // Reject overlong 3/4-byte forms, surrogates and code points past U+10FFFF, so that what
    // we call a character is exactly what PCRE2's UTF check accepts.
    const auto c1 = static_cast<uint8_t>(s[i + 1]);
    if (c == 0xE0 && c1 < 0xA0) return 1;
    if (c == 0xED && c1 >= 0xA0) return 1;
    if (c == 0xF0 && c1 < 0x90) return 1;
    if (c == 0xF4 && c1 >= 0x90) return 1;
    return n;
}

bool utf8_valid(std::string_view s) {
    for (size_t i = 0; i < s.size();) {
        const size_t n = utf8_len(s, i);
        if (n == 1 && static_cast<uint8_t>(s[i]) >= 0x80) return false;
        i += n;
    }
    return true;
}

void utf8_append(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

namespace {
struct ByteTable {
    std::array<std::string, 256> fwd;
    // Inverse over the code points 0..0x143 that the table uses; -1 = not in the alphabet.
    std::array<int, 0x144> inv;
    ByteTable() {
        inv.fill(-1);
        // Printable Latin-1 bytes stand for themselves; the rest (controls, space, 0x7F-0xA0,
        // 0xAD) are moved to 256, 257, ... in byte order. This is GPT-2's published table.
        uint32_t next = 256;
        for (int b = 0; b < 256; ++b) {
            const bool keep = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
            const uint32_t cp = keep ? static_cast<uint32_t>(b) : next++;
            utf8_append(fwd[b], cp);
            inv[cp] = b;
        }
    }
};
const ByteTable& table() {
    static const ByteTable t;
    return t;
}
}  // namespace

const std::string& byte_to_unicode(uint8_t b) { return table().fwd[b]; }

std::string bytes_to_unicode(std::string_view raw) {
    const auto& t = table();
    std::string out;
    out.reserve(raw.size() * 2);
    for (char c : raw) out += t.fwd[static_cast<uint8_t>(c)];
    return out;
}

std::string unicode_to_bytes(std::string_view mapped) {
    const auto& t = table();
    std::string out;
    out.reserve(mapped.size());
    for (size_t i = 0; i < mapped.size();) {
        const size_t n = utf8_len(mapped, i);
        uint32_t cp = 0x110000;
        const auto c = static_cast<uint8_t>(mapped[i]);
        if (n == 1 && c < 0x80)
            cp = c;
        else if (n == 2)
            cp = ((c & 0x1Fu) << 6) | (static_cast<uint8_t>(mapped[i + 1]) & 0x3Fu);
        if (cp < t.inv.size() && t.inv[cp] >= 0)
            out += static_cast<char>(t.inv[cp]);
        else
            out.append(mapped.substr(i, n));
        i += n;
    }
    return out;
}

int parse_byte_token(std::string_view s) {
    if (s.size() != 6 || s[0] != '<' || s[1] != '0' || s[2] != 'x' || s[5] != '>') return -1;
    auto hex = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        return -1;
    };
    const int hi = hex(s[3]), lo = hex(s[4]);
    return (hi < 0 || lo < 0) ? -1 : hi * 16 + lo;
}

std::string byte_token_name(uint8_t b) {
    static const char* digits = "0123456789ABCDEF";
    std::string s = "<0x00>";
    s[3] = digits[b >> 4];
    s[4] = digits[b & 15];
    return s;
}

std::string replace_all(std::string_view s, std::string_view from, std::string_view to) {
    std::string out;
    out.reserve(s.size());
    size_t i = 0;
    while (true) {
        const size_t j = s.find(from, i);
        if (j == std::string_view::npos) break;
        out.append(s.substr(i, j - i));
        out.append(to);
        i = j + from.size();
    }
    out.append(s.substr(i));
    return out;
}

}  // namespace edge::tokenizer
