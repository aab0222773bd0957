// The .edge writer: the weights section first, tensor by tensor, then the meta, tokenizer, strings
// and program sections, each span hashed as it is written; then the table (with the checksums)
// and the header are rewritten in place.
#include "engine/compile/edge_writer.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "engine/core/partial_file.h"
#include "engine/model/config_json.h"
#include "engine/model/edge_file.h"
#include "engine/model/weights.h"
#include "engine/model/xxh64.h"

namespace edge::compile {

namespace {

using nlohmann::json;

uint64_t align_up(uint64_t n, uint64_t a) { return (n + a - 1) / a * a; }

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

struct Section {
    EdgeSectionKind kind;
    std::string payload;
};

constexpr uint64_t kWeightsOffset = kEdgeAlignment;  // header + table fit in the first page
constexpr uint32_t kSections = 5;

}  // namespace

struct EdgeWriter::State {
    std::string path;
    PartialFile file;  // removed unless finish() moved it into place
    std::ofstream& f = file.stream();
    Xxh64Stream weights_hash;
    uint64_t pos = 0;  // inside the weights section
    json tensors = json::array();

    void put(const void* p, uint64_t n, Xxh64Stream* h) {
        f.write(static_cast<const char*>(p), std::streamsize(n));
        if (h) h->update(p, size_t(n));
    }
    void pad(uint64_t n, Xxh64Stream* h) {
        static const char zeros[kEdgeAlignment] = {};
        while (n) {
            const uint64_t k = std::min<uint64_t>(n, sizeof zeros);
            put(zeros, k, h);
            n -= k;
        }
    }
};

EdgeWriter::EdgeWriter(std::unique_ptr<State> s) : s_(std::move(s)) {}
EdgeWriter::~EdgeWriter() = default;

Result<std::unique_ptr<EdgeWriter>> EdgeWriter::create(const std::string& path) {
    static_assert(sizeof(EdgeFileHeader) + kSections * sizeof(EdgeSectionEntry) <= kWeightsOffset);
    auto s = std::make_unique<State>();
    s->path = path;
    EDGE_TRY(s->file.open(path));
    s->pad(kWeightsOffset, nullptr);  // header and table, rewritten by finish()
    return std::unique_ptr<EdgeWriter>(new EdgeWriter(std::move(s)));
}

Status EdgeWriter::add(const Tensor& x) {
    State& s = *s_;
    if (!x.data) return err(s.path, ": tensor '", x.name, "' has no data to write");
    s.tensors.push_back(tensor_entry_to_json(x, s.pos));
    s.put(x.data.get(), x.nbytes, &s.weights_hash);
    const uint64_t next = align_up(s.pos + x.nbytes, kEdgeTensorAlign);
    s.pad(next - s.pos - x.nbytes, &s.weights_hash);
    s.pos = next;
    weight_bytes_ += x.nbytes;
    if (!s.f) return err(s.path, ": write failed (disk full?)");
    return {};
}

Status EdgeWriter::finish(const Model& m, const EdgeWriteInfo& info) {
    State& s = *s_;
    try {
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
                        {"tensors", s.tensors}};
        const TokenizerSpec& t = m.tokenizer;
        std::string strings;
        for (const auto* list : {&t.tokens, &t.merges})
            for (const std::string& str : *list) {
                const uint32_t n = uint32_t(str.size());
                strings.append(reinterpret_cast<const char*>(&n), 4);
                strings += str;
            }
        const std::vector<Section> secs = {{EdgeSectionKind::Meta, dump(meta)},
                                           {EdgeSectionKind::Tokenizer, dump(tokenizer_header_to_json(t))},
                                           {EdgeSectionKind::TokStrings, std::move(strings)},
                                           {EdgeSectionKind::Program, info.program_json}};

        std::vector<EdgeSectionEntry> table(kSections);
        auto entry = [&](EdgeSectionEntry& e, EdgeSectionKind kind, uint64_t offset, uint64_t bytes) {
            std::strncpy(e.name, edge_section_name(kind), sizeof e.name - 1);
            e.kind = uint32_t(kind);
            e.offset = offset;
            e.bytes = bytes;
            e.span = align_up(std::max<uint64_t>(bytes, 1), kEdgeAlignment);
        };
        // The weights section: close its span with zeros.
        entry(table[0], EdgeSectionKind::Weights, kWeightsOffset, s.pos);
        s.pad(table[0].span - s.pos, &s.weights_hash);
        table[0].checksum = s.weights_hash.digest();
        uint64_t off = kWeightsOffset + table[0].span;
        for (size_t i = 0; i < secs.size(); ++i) {
            EdgeSectionEntry& e = table[i + 1];
            entry(e, secs[i].kind, off, secs[i].payload.size());
            Xxh64Stream h;
            s.put(secs[i].payload.data(), e.bytes, &h);
            s.pad(e.span - e.bytes, &h);
            e.checksum = h.digest();
            off += e.span;
        }

        EdgeFileHeader hd{};
        std::memcpy(hd.magic, kEdgeMagic, 8);
        hd.version = kEdgeVersion;
        hd.header_bytes = sizeof hd;
        hd.table_offset = sizeof hd;
        hd.section_count = kSections;
        hd.alignment = kEdgeAlignment;
        hd.table_span = kWeightsOffset - hd.table_offset;
        hd.file_bytes = off;
        std::vector<uint8_t> span(size_t(hd.table_span), 0);
        std::memcpy(span.data(), table.data(), table.size() * sizeof(EdgeSectionEntry));
        hd.table_checksum = xxh64(span.data(), span.size());
        hd.header_checksum = xxh64(&hd, offsetof(EdgeFileHeader, header_checksum));
        s.f.seekp(0);
        s.put(&hd, sizeof hd, nullptr);
        s.put(table.data(), table.size() * sizeof(EdgeSectionEntry), nullptr);
        s.f.flush();
        if (!s.f) return err(s.path, ": write failed (disk full?)");
        std::error_code ec;
        const uint64_t wrote = std::filesystem::file_size(s.file.partial_path(), ec);
        if (ec || wrote != hd.file_bytes) return err(s.path, ": wrote ", wrote, " bytes, expected ", hd.file_bytes);
        return s.file.commit();
    } catch (const std::exception& e) {
        return err(s.path, ": cannot write the engine file: ", e.what());
    }
}

Status write_edge_file(const Model& m, const EdgeWriteInfo& info, const std::string& path, Progress* progress) {
    auto w = EdgeWriter::create(path);
    if (!w.ok()) return w.error();
    for (size_t k = 0; k < m.tensors.size(); ++k) {
        const Tensor& x = m.tensors[k];
        if (model::is_unread(x)) {
            auto r = model::weight_f32(m, x);
            if (!r.ok()) return r.error();
            EDGE_TRY((*w)->add(*r));
            model::release_weight(m, x);
        } else {
            EDGE_TRY((*w)->add(x));
        }
        report(progress, 0.9 * double(k + 1) / double(m.tensors.size()), "writing weights");
        if (is_cancelled(progress)) return err(path, ": cancelled");
    }
    EDGE_TRY((*w)->finish(m, info));
    report(progress, 1.0, "written");
    return {};
}

}  // namespace edge::compile
