// The .edge writer: sections are written with zero padding and placeholder checksums, then the
// written file is memory-mapped, every span hashed, and the table and header patched in place.
#include "engine/compile/edge_writer.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/core/mapped_file.h"
#include "engine/model/config_json.h"
#include "engine/model/edge_file.h"
#include "engine/model/xxh64.h"

namespace edge::compile {

namespace {

using nlohmann::json;

uint64_t align_up(uint64_t n, uint64_t a) { return (n + a - 1) / a * a; }

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

struct Section {
    EdgeSectionKind kind;
    std::string payload;  // empty for weights (streamed from the tensors)
    uint64_t bytes = 0;
};

}  // namespace

Status write_edge_file(const Model& m, const EdgeWriteInfo& info, const std::string& path, Progress* progress) {
    try {
        // Weights layout: every tensor at a 64-byte aligned offset inside the section.
        json tensors = json::array();
        uint64_t woff = 0;
        for (const Tensor& x : m.tensors) {
            if (!x.data) return err(path, ": tensor '", x.name, "' has no data to write");
            json e{{"name", x.name},
                   {"type", dtype_name(x.type)},
                   {"source_type", dtype_name(x.source_type)},
                   {"shape", x.shape},
                   {"offset", woff},
                   {"nbytes", x.nbytes}};
            if (x.quant) e["quant"] = quant_info_to_json(*x.quant);
            tensors.push_back(std::move(e));
            woff = align_up(woff + x.nbytes, kEdgeTensorAlign);
        }
        json md = json::array();
        for (const auto& [k, v] : m.metadata) md.push_back({k, v});
        const json meta{{"format", "edge"},
                        {"architecture", m.architecture},
                        {"name", m.name},
                        {"target", info.target},
                        {"source", {{"path", m.source_path}, {"format", m.source_format}, {"name", m.name}}},
                        {"plan_summary", info.plan_summary},
                        {"config", llama_config_to_json(m.config)},
                        {"metadata", md},
                        {"tensors", tensors}};
        const TokenizerSpec& t = m.tokenizer;
        const json tok = tokenizer_header_to_json(t);
        std::string strings;
        for (const auto* list : {&t.tokens, &t.merges})
            for (const std::string& s : *list) {
                const uint32_t n = uint32_t(s.size());
                strings.append(reinterpret_cast<const char*>(&n), 4);
                strings += s;
            }
        std::vector<Section> secs;
        secs.push_back({EdgeSectionKind::Meta, dump(meta)});
        secs.push_back({EdgeSectionKind::Tokenizer, dump(tok)});
        secs.push_back({EdgeSectionKind::TokStrings, std::move(strings)});
        secs.push_back({EdgeSectionKind::Program, info.program_json});
        secs.push_back({EdgeSectionKind::Weights, {}});
        for (Section& s : secs) s.bytes = s.kind == EdgeSectionKind::Weights ? woff : s.payload.size();

        EdgeFileHeader h{};
        std::memcpy(h.magic, kEdgeMagic, 8);
        h.version = kEdgeVersion;
        h.header_bytes = sizeof h;
        h.table_offset = sizeof h;
        h.section_count = uint32_t(secs.size());
        h.alignment = kEdgeAlignment;
        h.table_span =
            align_up(h.table_offset + secs.size() * sizeof(EdgeSectionEntry), kEdgeAlignment) - h.table_offset;
        std::vector<EdgeSectionEntry> table(secs.size());
        uint64_t off = h.table_offset + h.table_span;
        for (size_t i = 0; i < secs.size(); ++i) {
            EdgeSectionEntry& e = table[i];
            std::strncpy(e.name, edge_section_name(secs[i].kind), sizeof e.name - 1);
            e.kind = uint32_t(secs[i].kind);
            e.offset = off;
            e.bytes = secs[i].bytes;
            e.span = align_up(std::max<uint64_t>(e.bytes, 1), kEdgeAlignment);
            off += e.span;
        }
        h.file_bytes = off;

        const std::string tmp = path + ".partial";
        struct RemoveUnlessRenamed {  // a failed write leaves no partial file behind
            const std::string& p;
            bool keep = false;
            ~RemoveUnlessRenamed() {
                std::error_code ec;
                if (!keep) std::filesystem::remove(p, ec);
            }
        } guard{tmp};
        {
            std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
            if (!f) return err(path, ": cannot open for writing");
            const std::string zeros(kEdgeAlignment, '\0');
            auto pad_to = [&](uint64_t pos, uint64_t target) {
                while (pos < target) {
                    const uint64_t n = std::min<uint64_t>(target - pos, zeros.size());
                    f.write(zeros.data(), std::streamsize(n));
                    pos += n;
                }
            };
            f.write(reinterpret_cast<const char*>(&h), sizeof h);
            f.write(reinterpret_cast<const char*>(table.data()),
                    std::streamsize(table.size() * sizeof(EdgeSectionEntry)));
            pad_to(h.table_offset + table.size() * sizeof(EdgeSectionEntry), table[0].offset);
            for (size_t i = 0; i < secs.size(); ++i) {
                uint64_t pos = 0;
                if (secs[i].kind == EdgeSectionKind::Weights) {
                    for (size_t k = 0; k < m.tensors.size(); ++k) {
                        const Tensor& x = m.tensors[k];
                        f.write(reinterpret_cast<const char*>(x.data.get()), std::streamsize(x.nbytes));
                        pos += x.nbytes;
                        const uint64_t next = align_up(pos, kEdgeTensorAlign);
                        pad_to(pos, next);
                        pos = next;
                        report(progress, 0.9 * double(k + 1) / double(m.tensors.size()), "writing weights");
                        if (is_cancelled(progress)) return err(path, ": cancelled");
                    }
                } else {
                    f.write(secs[i].payload.data(), std::streamsize(secs[i].payload.size()));
                    pos = secs[i].payload.size();
                }
                pad_to(pos, table[i].span);
            }
            if (!f) return err(path, ": write failed (disk full?)");
        }
        {
            auto mf = MappedFile::open(tmp);
            if (!mf.ok()) return mf.error();
            const uint8_t* p = (*mf)->data();
            if ((*mf)->size() != h.file_bytes)
                return err(path, ": wrote ", (*mf)->size(), " bytes, expected ", h.file_bytes);
            for (EdgeSectionEntry& e : table) e.checksum = xxh64(p + e.offset, size_t(e.span));
            std::vector<uint8_t> span(size_t(h.table_span), 0);
            std::memcpy(span.data(), table.data(), table.size() * sizeof(EdgeSectionEntry));
            h.table_checksum = xxh64(span.data(), span.size());
            h.header_checksum = xxh64(&h, offsetof(EdgeFileHeader, header_checksum));
            std::fstream f(tmp, std::ios::binary | std::ios::in | std::ios::out);
            f.write(reinterpret_cast<const char*>(&h), sizeof h);
            f.write(reinterpret_cast<const char*>(table.data()),
                    std::streamsize(table.size() * sizeof(EdgeSectionEntry)));
            if (!f) return err(path, ": cannot write the header");
        }
        std::error_code ec;
        std::filesystem::rename(tmp, path, ec);
        if (ec) return err(path, ": cannot move the written file into place: ", ec.message());
        guard.keep = true;
        report(progress, 1.0, "written");
        return {};
    } catch (const std::exception& e) {
        return err(path, ": cannot write the engine file: ", e.what());
    }
}

}  // namespace edge::compile
