// The .edge writer: the weights section first, tensor by tensor, then the meta, tokenizer, strings
// and program sections, each span hashed as it is written; then the table (with the checksums)
// and the header are rewritten in place.
#include "engine/compile/edge_writer.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "engine/model/config_json.h"
#include "engine/model/edge_file.h"
#include "engine/model/tensor_stream.h"
#include "engine/model/weights.h"
#include "engine/model/xxh64.h"

using edge::model::edge_section_name;
using edge::model::EdgeFileHeader;
using edge::model::EdgeSectionEntry;
using edge::model::EdgeSectionKind;
using edge::model::kEdgeAlignment;
using edge::model::kEdgeMagic;
using edge::model::kEdgeTensorAlign;
using edge::model::kEdgeVersion;
using edge::model::llama_config_to_json;
using edge::model::Model;
using edge::model::tokenizer_header_to_json;
using edge::model::xxh64;
using edge::model::Xxh64Stream;
using edge::tokenizer::TokenizerSpec;

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

// The weights section is the stream's data section.
struct EdgeWriter::State : model::TensorStreamWriter {};

EdgeWriter::EdgeWriter(std::unique_ptr<State> s) : s_(std::move(s)) {}
EdgeWriter::~EdgeWriter() = default;

Result<std::unique_ptr<EdgeWriter>> EdgeWriter::create(const std::string& path) {
    static_assert(sizeof(EdgeFileHeader) + kSections * sizeof(EdgeSectionEntry) <= kWeightsOffset);
    auto s = std::make_unique<State>();
    EDGE_TRY(s->open(path, kWeightsOffset));  // header and table, rewritten by finish()
    return std::unique_ptr<EdgeWriter>(new EdgeWriter(std::move(s)));
}

Status EdgeWriter::add(const Tensor& x) {
    EDGE_TRY(s_->add(x, kEdgeTensorAlign));
    weight_bytes_ += x.nbytes;
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
        model::append_strings(strings, t.tokens);
        model::append_strings(strings, t.merges);
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
        s.pad(table[0].span - s.pos, &s.data);
        table[0].checksum = s.data.digest();
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
        return s.commit();
    } catch (const std::exception& e) {
        return err(s.path, ": cannot write the engine file: ", e.what());
    }
}

Status write_edge_file(const Model& m, const EdgeWriteInfo& info, const std::string& path, Progress* progress) {
    auto w = EdgeWriter::create(path);
    if (!w.ok()) return w.error();
    for (size_t k = 0; k < m.tensors.size(); ++k) {
        EDGE_TRY(model::use_weight(m, m.tensors[k], [&](const Tensor& x) { return (*w)->add(x); }));
        report(progress, 0.9 * double(k + 1) / double(m.tensors.size()), "writing weights");
        if (is_cancelled(progress)) return err(path, ": cancelled");
    }
    EDGE_TRY((*w)->finish(m, info));
    report(progress, 1.0, "written");
    return {};
}

}  // namespace edge::compile
