#include "edgeq.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/core/json_util.h"

#include "engine/core/mapped_file.h"
#include "engine/model/config_json.h"
#include "engine/model/tensor_stream.h"
#include "engine/model/weights.h"
#include "engine/model/xxh64.h"

using edge::tokenizer::TokenizerSpec;

namespace edge::model {

namespace {

using nlohmann::json;

std::optional<DType> dtype_from_name(const std::string& s) {
    for (int i = 0; i <= int(DType::QI4); ++i)
        if (s == dtype_name(DType(i))) return DType(i);
    return std::nullopt;
}

}  // namespace

bool is_edgeq(const uint8_t* head, size_t n) { return n >= 8 && std::memcmp(head, kEdgeqMagic, 8) == 0; }

struct EdgeqWriter::State : model::TensorStreamWriter {};

namespace {
constexpr uint64_t kEdgeqDataOffset = 128;  // header + checksums (96 bytes), 64-aligned
}

EdgeqWriter::EdgeqWriter(std::unique_ptr<State> s) : s_(std::move(s)) {}
EdgeqWriter::~EdgeqWriter() = default;

Result<std::unique_ptr<EdgeqWriter>> EdgeqWriter::create(const std::string& path) {
    auto s = std::make_unique<State>();
    EDGE_TRY(s->open(path, kEdgeqDataOffset));  // header and checksums, rewritten by finish()
    return std::unique_ptr<EdgeqWriter>(new EdgeqWriter(std::move(s)));
}

Status EdgeqWriter::add(const Tensor& x) {
    return s_->add(x, 64);  // tensors 64-byte aligned inside the data section
}

Status EdgeqWriter::finish(const Model& m) {
    State& s = *s_;
    try {
        json meta;
        meta["architecture"] = m.architecture;
        meta["name"] = m.name;
        meta["source_format"] = m.source_format;
        meta["config"] = llama_config_to_json(m.config);
        json md = json::array();
        for (const auto& [k, v] : m.metadata) md.push_back({k, v});
        meta["metadata"] = md;
        const TokenizerSpec& t = m.tokenizer;
        meta["tokenizer"] = tokenizer_header_to_json(t);
        meta["tensors"] = s.tensors;
        const std::string meta_s = meta.dump(-1, ' ', false, json::error_handler_t::replace);
        std::string strings;
        model::append_strings(strings, t.tokens);
        model::append_strings(strings, t.merges);

        EdgeqHeader h{};
        std::memcpy(h.magic, kEdgeqMagic, 8);
        h.version = kEdgeqVersion;
        h.header_bytes = sizeof h + sizeof(EdgeqChecksums);
        h.data_offset = kEdgeqDataOffset;
        h.data_bytes = s.pos;
        h.meta_offset = h.data_offset + h.data_bytes;
        h.meta_bytes = meta_s.size();
        h.strings_offset = h.meta_offset + h.meta_bytes;
        h.strings_bytes = strings.size();
        EdgeqChecksums sums{};
        sums.meta = xxh64(meta_s.data(), meta_s.size());
        sums.strings = xxh64(strings.data(), strings.size());
        sums.data = s.data.digest();
        unsigned char head[sizeof h + sizeof sums];
        std::memcpy(head, &h, sizeof h);
        std::memcpy(head + sizeof h, &sums, sizeof sums);
        sums.header = xxh64(head, sizeof head - 8);
        s.f.write(meta_s.data(), std::streamsize(meta_s.size()));
        s.f.write(strings.data(), std::streamsize(strings.size()));
        s.f.seekp(0);
        s.f.write(reinterpret_cast<const char*>(&h), sizeof h);
        s.f.write(reinterpret_cast<const char*>(&sums), sizeof sums);
        // Written beside the target and renamed over it, so a failed save never loses a file.
        return s.commit();
    } catch (const std::exception& e) {
        return err(s.path, ": cannot save: ", e.what());
    }
}

Status save_edgeq(const Model& m, const std::string& path, Progress* progress) {
    auto w = EdgeqWriter::create(path);
    if (!w.ok()) return w.error();
    for (size_t i = 0; i < m.tensors.size(); ++i) {
        // a lazily opened model: each unread tensor read, written and let go
        EDGE_TRY(model::use_weight(m, m.tensors[i], [&](const Tensor& x) { return (*w)->add(x); }));
        report(progress, double(i + 1) / double(m.tensors.size()), "writing tensors");
        if (is_cancelled(progress)) return err(path, ": cancelled");
    }
    return (*w)->finish(m);
}

Result<Model> load_edgeq_model(const std::string& path, Progress* progress) {
    auto mf = MappedFile::open(path);
    if (!mf.ok()) return mf.error();
    const std::shared_ptr<MappedFile> map = *mf;
    const uint8_t* p = map->data();
    const uint64_t size = map->size();
    EdgeqHeader h{};
    if (size < sizeof h || !is_edgeq(p, size)) return err(path, ": not an EdgeStudio quantized model (.edgeq)");
    std::memcpy(&h, p, sizeof h);
    if (h.version > kEdgeqVersion)
        return err(path, ": .edgeq version ", h.version, " is newer than this EdgeStudio reads (", kEdgeqVersion,
                   "): update EdgeStudio or re-run quantize");
    if (h.version < 1) return err(path, ": .edgeq version 0 is not a valid version");
    if (h.version >= 2) {
        EdgeqChecksums sums{};
        if (size < sizeof h + sizeof sums || h.header_bytes != sizeof h + sizeof sums)
            return err(path, ": header size ", h.header_bytes, " is not ", sizeof h + sizeof sums, " (truncated?)");
        std::memcpy(&sums, p + sizeof h, sizeof sums);
        if (xxh64(p, sizeof h + sizeof sums - 8) != sums.header)
            return err(path, ": header checksum mismatch (the header is corrupt)");
        if (h.meta_offset < h.header_bytes)
            return err(path, ": the metadata section overlaps the header (offset ", h.meta_offset, ")");
        auto section_ok = [&](uint64_t o, uint64_t n) { return o <= size && n <= size - o; };
        const struct {
            const char* name;
            uint64_t off, bytes, sum;
        } secs[] = {{"metadata", h.meta_offset, h.meta_bytes, sums.meta},
                    {"strings", h.strings_offset, h.strings_bytes, sums.strings},
                    {"data", h.data_offset, h.data_bytes, sums.data}};
        for (const auto& sec : secs) {
            if (!section_ok(sec.off, sec.bytes))
                return err(path, ": the ", sec.name, " section runs past the end of the file (", size,
                           " bytes): truncated?");
            // The tensors fault their pages back in when they are used.
            if (model::hash_released(*map, sec.off, sec.bytes) != sec.sum)
                return err(path, ": ", sec.name, " section checksum mismatch (the file is corrupt)");
        }
        report(progress, 0.05, "verified checksums");
    }
    auto in_file = [&](uint64_t o, uint64_t n) { return o <= size && n <= size - o; };
    if (!in_file(h.meta_offset, h.meta_bytes) || !in_file(h.strings_offset, h.strings_bytes) ||
        !in_file(h.data_offset, h.data_bytes) || h.data_offset % 64 != 0)
        return err(path, ": section offsets run past the end of the file (", size, " bytes): truncated?");
    try {
        auto parsed = parse_json(std::string_view(reinterpret_cast<const char*>(p + h.meta_offset), h.meta_bytes),
                                 path + ": metadata section");
        if (!parsed) return parsed.error();
        const json& meta = *parsed;
        if (!meta.is_object()) return err(path, ": the metadata section is not a JSON object");
        Model m;
        m.source_path = path;
        m.source_format = "edgeq";
        m.architecture = meta.value("architecture", "llama");
        m.name = meta.value("name", "");
        m.config = llama_config_from_json(meta.at("config"));
        for (const json& kv : meta.at("metadata")) m.metadata.emplace_back(kv.at(0), kv.at(1));
        m.metadata.emplace_back("edgeq.source_format", meta.value("source_format", ""));

        const json& t = meta.at("tokenizer");
        TokenizerSpec& tok = m.tokenizer;
        tokenizer_header_from_json(t, tok);
        tok.source = path;
        const uint64_t n_tokens = t.at("n_tokens"), n_merges = t.at("n_merges");
        uint64_t so = h.strings_offset;
        const uint64_t send = h.strings_offset + h.strings_bytes;
        auto get_strings = [&](uint64_t n, std::vector<std::string>& out) -> Status {
            if (n > h.strings_bytes / 4) return err(path, ": tokenizer string count ", n, " is absurd");
            out.reserve(size_t(n));
            for (uint64_t i = 0; i < n; ++i) {
                uint32_t len = 0;
                if (send - so < 4) return err(path, ": tokenizer strings truncated at string ", i);
                std::memcpy(&len, p + so, 4);
                so += 4;
                if (send - so < len) return err(path, ": tokenizer string ", i, " runs past its section");
                out.emplace_back(reinterpret_cast<const char*>(p + so), len);
                so += len;
            }
            return {};
        };
        EDGE_TRY(get_strings(n_tokens, tok.tokens));
        EDGE_TRY(get_strings(n_merges, tok.merges));

        const json& tensors = meta.at("tensors");
        size_t i = 0;
        for (const json& e : tensors) {
            Tensor x;
            x.name = e.at("name");
            const auto type = dtype_from_name(e.at("type"));
            const auto src = dtype_from_name(e.value("source_type", "F32"));
            if (!type) return err(path, ": tensor '", x.name, "' has unknown type ", json_excerpt(e.at("type")));
            x.type = *type;
            x.source_type = src.value_or(*type);
            x.shape = e.at("shape").get<std::vector<int64_t>>();
            if (const char* why = shape_problem(x.shape, h.data_bytes))
                return err(path, ": tensor '", x.name, "' ", why, " (the data section has ", h.data_bytes, " bytes)");
            const uint64_t off = e.at("offset"), nbytes = e.at("nbytes");
            if (off % 64 != 0 || off > h.data_bytes || nbytes > h.data_bytes - off)
                return err(path, ": tensor '", x.name, "' lies outside the data section");
            x.nbytes = size_t(nbytes);
            size_t expect = 0;
            if (e.contains("quant")) {
                if (x.type != DType::QI8 && x.type != DType::QI4)
                    return err(path, ": tensor '", x.name, "' has quantization parameters but type ",
                               dtype_name(x.type));
                const json& q = e.at("quant");
                auto info = std::make_shared<QuantInfo>();
                if (const char* why = quant_info_from_json(q, *info))
                    return err(path, ": tensor '", x.name, "' has ", why);
                if ((info->bits == 8) != (x.type == DType::QI8))
                    return err(path, ": tensor '", x.name, "' says ", info->bits, " bits but type ",
                               dtype_name(x.type));
                const int64_t rows = x.shape.size() == 2 ? x.shape[0] : 1;
                if (x.shape.empty() || x.shape.size() > 2)
                    return err(path, ": tensor '", x.name, "' must be 1-D or 2-D");
                if (const char* why = quant_layout(*info, rows, x.shape.back()))
                    return err(path, ": tensor '", x.name, "': ", why);
                expect = info->total_bytes;
                x.quant = std::move(info);
            } else {
                if (x.type == DType::QI8 || x.type == DType::QI4)
                    return err(path, ": tensor '", x.name, "' is ", dtype_name(x.type),
                               " without quantization parameters");
                if (dtype_block_elems(x.type) != 1)
                    return err(path, ": tensor '", x.name, "' has unsupported type ", dtype_name(x.type));
                expect = dtype_bytes(x.type, x.numel());
            }
            if (expect != x.nbytes)
                return err(path, ": tensor '", x.name, "' holds ", x.nbytes, " bytes but its type and shape need ",
                           expect);
            x.data = map->share(size_t(h.data_offset + off));
            m.tensors.push_back(std::move(x));
            report(progress, double(++i) / double(tensors.size()), "mapping tensors");
        }
        EDGE_TRY(validate_and_finalize_llama(m));
        return m;
    } catch (const std::exception& e) {
        return err(path, ": malformed .edgeq metadata: ", e.what());
    }
}

}  // namespace edge::model
