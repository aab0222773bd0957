// Small text helpers shared by the tokenizers: UTF-8 stepping, the GPT-2 byte<->unicode table,
// byte-token names (<0xXX>) and literal string replacement.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace edge::tokenizer {

// "▁" (U+2581), SentencePiece's visible space.
inline constexpr std::string_view kSpaceMark = "\xE2\x96\x81";

// Length of the UTF-8 sequence starting at s[i]. Invalid or truncated sequences count as one
// byte, so that arbitrary bytes still advance (they end up as byte-fallback tokens).
size_t utf8_len(std::string_view s, size_t i);
// True when the whole string is well-formed UTF-8.
bool utf8_valid(std::string_view s);
// Appends the UTF-8 encoding of a code point.
void utf8_append(std::string& out, uint32_t cp);

// GPT-2's byte-level alphabet: every byte maps to one printable code point so that BPE never
// sees raw control bytes or spaces. byte_to_unicode(b) is that code point's UTF-8 text.
const std::string& byte_to_unicode(uint8_t b);
// Maps every byte of `raw` through byte_to_unicode.
std::string bytes_to_unicode(std::string_view raw);
// Inverse of bytes_to_unicode. Code points outside the alphabet (e.g. in added tokens) are kept
// as their UTF-8 bytes, which is what they mean.
std::string unicode_to_bytes(std::string_view mapped);

// Parses a byte-token name "<0xAB>" (either hex case). Returns -1 when `s` is not one.
int parse_byte_token(std::string_view s);
// "<0xAB>" for byte 0xAB (upper-case hex, as SentencePiece and GGUF write it).
std::string byte_token_name(uint8_t b);

// Replaces every occurrence of `from` (non-empty) by `to`.
std::string replace_all(std::string_view s, std::string_view from, std::string_view to);

}  // namespace edge::tokenizer
