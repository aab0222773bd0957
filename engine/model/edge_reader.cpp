// Reader of the .edge engine file (edge_file.h, docs/edge-format.md). Order of checks: header
// (size, magic, checksum, version), the section table (checksum, names, bounds, order), every
// section's checksum (padding included), then the contents. Nothing is trusted before its
// checksum has been verified.
#include "edge_file.h"

#include <cstring>
#include <nlohmann/json.hpp>

#include "engine/core/json_util.h"

#include "engine/model/config_json.h"
#include "engine/model/tensor_stream.h"
#include "engine/model/xxh64.h"

using edge::tokenizer::TokenizerSpec;

namespace edge::model {

namespace {

using nlohmann::json;

std::optional<DType> dtype_from(const std::string& s) {
    for (int i = 0; i <= int(DType::QI4); ++i)
        if (s == dtype_name(DType(i))) return DType(i);
    return std::nullopt;
}

struct Reader {
    const std::string& path;
    const uint8_t* p;
    uint64_t size;
    const MappedFile& map;  // hashed pages leave the resident set as they are done

    Error fail(const std::string& section, const std::string& what) const {
        return err(path, ": section '", section, "': ", what);
    }
};

Status check_header(const Reader& r, EdgeFileHeader& h) {
    if (r.size < sizeof h)
        return r.fail("header",
                      "the file is " + std::to_string(r.size) + " bytes, shorter than the 128-byte header (truncated)");
    std::memcpy(&h, r.p, sizeof h);
    if (std::memcmp(h.magic, kEdgeMagic, 8) != 0)
        return r.fail("header", "bad magic: not an EdgeStudio engine file (.edge)");
    if (h.header_bytes < sizeof h || h.header_bytes > 65536 || h.header_bytes % 8 != 0 || h.header_bytes > r.size)
        return r.fail("header",
                      "header length " + std::to_string(h.header_bytes) + " is invalid (corrupt or truncated)");
    uint64_t stored = 0;
    std::memcpy(&stored, r.p + h.header_bytes - 8, 8);
    if (xxh64(r.p, h.header_bytes - 8) != stored) return r.fail("header", "checksum mismatch (the header is corrupt)");
    if (h.version > kEdgeVersion)
        return r.fail("header", "format version " + std::to_string(h.version) +
                                    " is newer than this build reads (version " + std::to_string(kEdgeVersion) +
                                    "): update EdgeStudio or recompile the engine");
    if (h.version != kEdgeVersion || h.header_bytes != sizeof h)
        return r.fail("header", "format version " + std::to_string(h.version) + " is not supported (expected " +
                                    std::to_string(kEdgeVersion) + ")");
    for (uint8_t b : h.reserved)
        if (b != 0) return r.fail("header", "reserved bytes are not zero");
    if (h.file_bytes != r.size)
        return r.fail("header", "the header says the file is " + std::to_string(h.file_bytes) + " bytes but it is " +
                                    std::to_string(r.size) +
                                    (r.size < h.file_bytes ? " (truncated)" : " (trailing bytes)"));
    if (h.alignment != kEdgeAlignment)
        return r.fail("header", "section alignment " + std::to_string(h.alignment) + " is not 4096");
    if (h.table_offset != sizeof h) return r.fail("header", "the section table does not follow the header");
    if (h.section_count == 0 || h.section_count > 64)
        return r.fail("header", "section count " + std::to_string(h.section_count) + " is invalid");
    if (h.table_span > r.size - h.table_offset || h.table_span < uint64_t(h.section_count) * sizeof(EdgeSectionEntry))
        return r.fail("section table", "the table runs past the end of the file (truncated?)");
    if (xxh64(r.p + h.table_offset, size_t(h.table_span)) != h.table_checksum)
        return r.fail("section table", "checksum mismatch (the table or its padding is corrupt)");
    return {};
}

Status check_sections(const Reader& r, const EdgeFileHeader& h, std::vector<EdgeSectionEntry>& out,
                      Progress* progress) {
    out.resize(h.section_count);
    std::memcpy(out.data(), r.p + h.table_offset, out.size() * sizeof(EdgeSectionEntry));
    uint64_t expect = h.table_offset + h.table_span;
    for (size_t i = 0; i < out.size(); ++i) {
        const EdgeSectionEntry& e = out[i];
        if (e.name[15] != '\0')
            return r.fail("section table", "entry " + std::to_string(i) + " has an unterminated name");
        const std::string name(e.name);
        const char* known = e.kind >= 1 && e.kind <= 5 ? edge_section_name(EdgeSectionKind(e.kind)) : nullptr;
        if (!known || name != known)
            return r.fail("section table", "entry " + std::to_string(i) + " ('" + name + "') has an unknown kind");
        if (e.offset % h.alignment != 0)
            return r.fail(name, "offset " + std::to_string(e.offset) + " is not page aligned");
        if (e.offset < expect)
            return r.fail(name, "overlaps the previous section (offset " + std::to_string(e.offset) + " < " +
                                    std::to_string(expect) + ")");
        if (e.offset > expect)
            return r.fail(name, "leaves unchecked bytes before it (offset " + std::to_string(e.offset) + " > " +
                                    std::to_string(expect) + ")");
        if (e.offset > r.size || e.span > r.size - e.offset)
            return r.fail(name, "runs past the end of the file (offset " + std::to_string(e.offset) + " + " +
                                    std::to_string(e.span) + " > " + std::to_string(r.size) + " bytes: truncated?)");
        if (e.bytes > e.span) return r.fail(name, "payload is larger than its span");
        if (e.flags != 0 || e.reserved != 0) return r.fail(name, "reserved fields are not zero");
        for (size_t j = 0; j < i; ++j)
            if (out[j].kind == e.kind) return r.fail(name, "appears twice");
        if (model::hash_released(r.map, e.offset, e.span) != e.checksum)
            return r.fail(name, "checksum mismatch (the section or its padding is corrupt)");
        expect = e.offset + e.span;
        report(progress, 0.5 * double(i + 1) / double(out.size()), "verifying checksums");
    }
    if (expect != r.size)
        return r.fail("section table", "the sections end at " + std::to_string(expect) + " but the file has " +
                                           std::to_string(r.size) + " bytes");
    for (uint32_t k = 1; k <= 5; ++k) {
        bool found = false;
        for (const auto& e : out) found = found || e.kind == k;
        if (!found) return r.fail(edge_section_name(EdgeSectionKind(k)), "is missing");
    }
    return {};
}

const EdgeSectionEntry& section(const std::vector<EdgeSectionEntry>& v, EdgeSectionKind k) {
    for (const auto& e : v)
        if (e.kind == uint32_t(k)) return e;
    return v.front();  // unreachable: check_sections requires every kind
}

Status read_tokenizer(const Reader& r, const EdgeSectionEntry& ts, const json& t, TokenizerSpec& tok) {
    tokenizer_header_from_json(t, tok);
    tok.source = r.path;
    const uint64_t n_tokens = t.at("n_tokens"), n_merges = t.at("n_merges");
    uint64_t so = ts.offset;
    const uint64_t send = ts.offset + ts.bytes;
    auto get = [&](uint64_t n, std::vector<std::string>& out) -> Status {
        if (n > ts.bytes / 4) return r.fail("tok_strings", "string count " + std::to_string(n) + " is absurd");
        for (uint64_t i = 0; i < n; ++i) {
            uint32_t len = 0;
            if (send - so < 4) return r.fail("tok_strings", "truncated at string " + std::to_string(i));
            std::memcpy(&len, r.p + so, 4);
            so += 4;
            if (send - so < len) return r.fail("tok_strings", "string " + std::to_string(i) + " runs past the section");
            out.emplace_back(reinterpret_cast<const char*>(r.p + so), len);
            so += len;
        }
        return {};
    };
    EDGE_TRY(get(n_tokens, tok.tokens));
    EDGE_TRY(get(n_merges, tok.merges));
    return {};
}

Status read_tensor(const Reader& r, const std::shared_ptr<MappedFile>& map, const EdgeSectionEntry& ws, const json& e,
                   Tensor& x) {
    x.name = e.at("name");
    const auto type = dtype_from(e.at("type"));
    if (!type) return r.fail("meta", "tensor '" + x.name + "' has unknown type " + json_excerpt(e.at("type")));
    x.type = *type;
    x.source_type = dtype_from(e.value("source_type", "F32")).value_or(*type);
    x.shape = e.at("shape").get<std::vector<int64_t>>();
    if (x.shape.empty() || x.shape.size() > 4) return r.fail("meta", "tensor '" + x.name + "' has a bad rank");
    if (const char* why = shape_problem(x.shape, ws.bytes))
        return r.fail("meta", "tensor '" + x.name + "' " + why + " (the weights section has " +
                                  std::to_string(ws.bytes) + " bytes)");
    const uint64_t off = e.at("offset"), nbytes = e.at("nbytes");
    if (off % kEdgeTensorAlign != 0 || off > ws.bytes || nbytes > ws.bytes - off)
        return r.fail("weights",
                      "tensor '" + x.name + "' lies outside the section (offset " + std::to_string(off) + ")");
    x.nbytes = size_t(nbytes);
    size_t expect = 0;
    if (e.contains("quant")) {
        if (x.type != DType::QI8 && x.type != DType::QI4)
            return r.fail("meta", "tensor '" + x.name + "' has quantization parameters but is not QI8/QI4");
        const json& q = e.at("quant");
        auto info = std::make_shared<QuantInfo>();
        if (const char* why = quant_info_from_json(q, *info))
            return r.fail("meta", "tensor '" + x.name + "' has " + why);
        if ((info->bits == 8) != (x.type == DType::QI8))
            return r.fail("meta", "tensor '" + x.name + "' bits disagree with its type");
        if (x.shape.size() > 2) return r.fail("meta", "quantized tensor '" + x.name + "' must be 1-D or 2-D");
        const int64_t rows = x.shape.size() == 2 ? x.shape[0] : 1;
        if (const char* why = quant_layout(*info, rows, x.shape.back()))
            return r.fail("meta", "tensor '" + x.name + "': " + why);
        expect = info->total_bytes;
        x.quant = std::move(info);
    } else {
        if (x.type == DType::QI8 || x.type == DType::QI4 || dtype_block_elems(x.type) != 1)
            return r.fail("meta", "tensor '" + x.name + "' has unsupported type " + dtype_name(x.type));
        expect = dtype_bytes(x.type, x.numel());
    }
    if (expect != x.nbytes)
        return r.fail("meta", "tensor '" + x.name + "' holds " + std::to_string(x.nbytes) +
                                  " bytes but its type and shape need " + std::to_string(expect));
    x.data = map->share(size_t(ws.offset + off));  // aliases the mapping: no copy
    return {};
}

}  // namespace

const char* edge_section_name(EdgeSectionKind k) {
    switch (k) {
        case EdgeSectionKind::Meta: return "meta";
        case EdgeSectionKind::Tokenizer: return "tokenizer";
        case EdgeSectionKind::TokStrings: return "tok_strings";
        case EdgeSectionKind::Program: return "plan";
        case EdgeSectionKind::Weights: return "weights";
    }
    return "?";
}

bool is_edge_file(const uint8_t* head, size_t n) { return n >= 8 && std::memcmp(head, kEdgeMagic, 8) == 0; }

Result<EdgeFile> read_edge_file(const std::shared_ptr<MappedFile>& map, Progress* progress) {
    if (!map) return err("no engine file given");
    const Reader r{map->path(), map->data(), map->size(), *map};
    EdgeFileHeader h{};
    EDGE_TRY(check_header(r, h));
    std::vector<EdgeSectionEntry> secs;
    EDGE_TRY(check_sections(r, h, secs, progress));
    const EdgeSectionEntry& ms = section(secs, EdgeSectionKind::Meta);
    const EdgeSectionEntry& tk = section(secs, EdgeSectionKind::Tokenizer);
    const EdgeSectionEntry& ts = section(secs, EdgeSectionKind::TokStrings);
    const EdgeSectionEntry& ps = section(secs, EdgeSectionKind::Program);
    const EdgeSectionEntry& ws = section(secs, EdgeSectionKind::Weights);
    if (ws.offset % kEdgeAlignment != 0) return r.fail("weights", "not page aligned");
    EdgeFile f;
    f.version = h.version;
    for (const auto& e : secs) f.sections.push_back({e.name, e.offset, e.bytes, e.span});
    std::string where = "meta";
    try {
        auto text_of = [&](const EdgeSectionEntry& e) {
            return std::string_view(reinterpret_cast<const char*>(r.p + e.offset), size_t(e.bytes));
        };
        auto parsed_meta = parse_json(text_of(ms), "contents");
        if (!parsed_meta || !parsed_meta->is_object())
            return r.fail("meta", parsed_meta ? std::string("not a JSON object") : parsed_meta.message());
        const json& meta = *parsed_meta;
        Model& m = f.model;
        m.source_path = r.path;
        m.source_format = "edge";
        m.architecture = meta.value("architecture", "llama");
        m.name = meta.value("name", "");
        f.target = meta.at("target");
        m.config = llama_config_from_json(meta.at("config"));
        for (const json& kv : meta.at("metadata")) m.metadata.emplace_back(kv.at(0), kv.at(1));
        m.metadata.emplace_back("edge.target", f.target);
        m.metadata.emplace_back("edge.source", meta.at("source").value("path", ""));
        m.metadata.emplace_back("edge.plan", meta.value("plan_summary", ""));
        where = "tokenizer";
        auto parsed_tok = parse_json(text_of(tk), "contents");
        if (!parsed_tok || !parsed_tok->is_object())
            return r.fail("tokenizer", parsed_tok ? std::string("not a JSON object") : parsed_tok.message());
        const json& tok = *parsed_tok;
        EDGE_TRY(read_tokenizer(r, ts, tok, m.tokenizer));
        where = "plan";
        // Every section is checked before anything uses it: the execution program is read by the
        // runtime (exec_program_from_json), but a cut or damaged one must not load on any path.
        {
            auto prog = parse_json(text_of(ps), "contents");
            if (!prog) return r.fail("plan", prog.message());
            if (!prog->is_object() || !prog->contains("version") || !prog->contains("nodes") ||
                !(*prog)["nodes"].is_array() || !prog->contains("memory") || !(*prog)["memory"].is_object())
                return r.fail("plan", "not an execution program (needs version, nodes and memory)");
        }
        f.program_json.assign(text_of(ps));
        where = "meta";
        const json& tensors = meta.at("tensors");
        size_t i = 0;
        for (const json& e : tensors) {
            Tensor x;
            EDGE_TRY(read_tensor(r, map, ws, e, x));
            m.tensors.push_back(std::move(x));
            report(progress, 0.5 + 0.5 * double(++i) / double(tensors.size()), "mapping tensors");
        }
        EDGE_TRY(validate_and_finalize_llama(m));
        return f;
    } catch (const std::exception& e) {
        return r.fail(where, std::string("malformed contents: ") + e.what());
    }
}

Result<EdgeFile> read_edge_file(const std::string& path, Progress* progress) {
    auto mf = MappedFile::open(path);
    if (!mf.ok()) return mf.error();
    return read_edge_file(*mf, progress);
}

Result<Model> load_edge_model(const std::string& path, Progress* progress) {
    auto f = read_edge_file(path, progress);
    if (!f.ok()) return f.error();
    return std::move(f.value().model);
}

}  // namespace edge::model
