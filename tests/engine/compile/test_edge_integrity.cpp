// Validation of .edge files at load: every flipped byte (sampled, plus every header, table and
// padding byte), newer versions, truncation, offsets past the end, overlapping sections.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "engine/compile/compile.h"
#include "engine/model/loader.h"
#include "engine/model/xxh64.h"
#include "test_support.h"

using edge::model::EdgeFileHeader;
using edge::model::EdgeSectionEntry;
using edge::model::EdgeSectionInfo;
using edge::model::EdgeSectionKind;
using edge::model::load_edge_model;
using edge::model::load_model;
using edge::model::read_edge_file;
using edge::model::xxh64;

using namespace edge;
using namespace edge::compile;

namespace {

const std::string& compiled() {
    static const std::string path = [] {
        const auto dir = edge::test::temp_dir("edge_integrity");
        const std::string out = (dir / "stories.edge").string();
        auto m = load_model(edge::test::shared("models/stories260K/stories260K.gguf"));
        if (!m.ok()) return std::string();
        CompileOptions o;
        o.out_path = out;
        o.plan = quant::uniform_plan(quant::Precision::INT4);
        auto r = edge::compile::compile(*m, o);
        return r.ok() ? out : std::string();
    }();
    return path;
}

std::vector<uint8_t> read_all(const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), {}};
}

std::string write_tmp(const std::vector<uint8_t>& bytes, const std::string& name) {
    const auto dir = edge::test::temp_dir("edge_bad");
    std::string p = (dir / name).string();
    std::ofstream f(p, std::ios::binary);
    f.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    return p;
}

EdgeFileHeader* header(std::vector<uint8_t>& b) { return reinterpret_cast<EdgeFileHeader*>(b.data()); }
EdgeSectionEntry* table(std::vector<uint8_t>& b) { return reinterpret_cast<EdgeSectionEntry*>(b.data() + 128); }
// The table entry of a section kind (files put the weights first now, older ones last).
EdgeSectionEntry& section(std::vector<uint8_t>& b, EdgeSectionKind k) {
    EdgeSectionEntry* t = table(b);
    for (uint32_t i = 0; i < 5; ++i)
        if (t[i].kind == uint32_t(k)) return t[i];
    ADD_FAILURE() << "no section of kind " << uint32_t(k);
    return t[0];
}
// Recomputes the table and header checksums after an edit, so the edit itself is what is tested.
void reseal(std::vector<uint8_t>& b) {
    EdgeFileHeader* h = header(b);
    h->table_checksum = xxh64(b.data() + h->table_offset, size_t(h->table_span));
    h->header_checksum = xxh64(b.data(), 120);
}

// Which section a byte belongs to, as the loader's errors name it.
std::string section_of(const std::vector<EdgeSectionInfo>& secs, uint64_t pos) {
    if (pos < 128) return "header";
    for (const auto& s : secs)
        if (pos >= s.offset && pos < s.offset + s.span) return s.name;
    return "section table";
}

}  // namespace

TEST(EdgeIntegrity, EveryFlippedByteIsRefusedNamingItsSection) {
    ASSERT_FALSE(compiled().empty()) << "compiling stories260K failed";
    auto mf = MappedFile::open(compiled());
    ASSERT_TRUE(mf.ok()) << mf.message();
    auto clean = read_edge_file(*mf);
    ASSERT_TRUE(clean.ok()) << clean.message();
    const auto secs = clean->sections;
    uint8_t* p = (*mf)->mutable_data();  // private copy-on-write mapping: the file is untouched
    const size_t size = (*mf)->size();
    std::vector<size_t> positions;
    for (size_t i = 0; i < size; i += 13) positions.push_back(i);             // every 13th byte of the file
    for (size_t i = 0; i < secs.front().offset; ++i) positions.push_back(i);  // header + table + its padding
    for (const auto& s : secs) {
        if (s.name != "weights")
            for (size_t i = s.offset; i < s.offset + s.bytes; ++i) positions.push_back(i);       // non-weight payloads
        for (size_t i = s.offset + s.bytes; i < s.offset + s.span; ++i) positions.push_back(i);  // all padding
    }
    const auto t0 = std::chrono::steady_clock::now();
    size_t refused = 0;
    for (size_t pos : positions) {
        const uint8_t mask = uint8_t(1u << (pos % 8));
        p[pos] ^= mask;
        auto r = read_edge_file(*mf);
        p[pos] ^= mask;
        if (r.ok()) {
            ADD_FAILURE() << "flipping byte " << pos << " was not noticed";
            continue;
        }
        const std::string want = "section '" + section_of(secs, pos) + "'";
        EXPECT_NE(r.message().find(want), std::string::npos) << "byte " << pos << ": " << r.message();
        EXPECT_NE(r.message().find(compiled()), std::string::npos) << r.message();
        ++refused;
    }
    EXPECT_EQ(refused, positions.size());
    EXPECT_TRUE(read_edge_file(*mf).ok());
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("[ info ] %zu flips over %zu bytes checked in %.2f s\n", positions.size(), size, s);
}

TEST(EdgeIntegrity, NewerVersionIsRefusedNamingBothVersions) {
    ASSERT_FALSE(compiled().empty());
    auto b = read_all(compiled());
    header(b)->version = 7;
    reseal(b);
    auto r = load_model(write_tmp(b, "newer.edge"));
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.message().find("format version 7 is newer"), std::string::npos) << r.message();
    EXPECT_NE(r.message().find("version 1"), std::string::npos) << r.message();
}

TEST(EdgeIntegrity, TruncatedFilesAreRefused) {
    ASSERT_FALSE(compiled().empty());
    const auto b = read_all(compiled());
    for (size_t n : {size_t(0), size_t(10), size_t(127), size_t(128), size_t(4096), b.size() / 2, b.size() - 1}) {
        std::vector<uint8_t> t(b.begin(), b.begin() + long(n));
        auto r = load_edge_model(write_tmp(t, "trunc.edge"));
        ASSERT_FALSE(r.ok()) << n;
        EXPECT_NE(r.message().find("section '"), std::string::npos) << r.message();
        if (n >= 128) {
            EXPECT_NE(r.message().find("truncated"), std::string::npos) << n << ": " << r.message();
        }
    }
}

TEST(EdgeIntegrity, OffsetsPastTheEndAndOverlapsAreRefused) {
    ASSERT_FALSE(compiled().empty());
    const auto b = read_all(compiled());
    {
        auto x = b;
        table(x)[4].span += 1u << 20;  // the last section (the program) runs past the end
        reseal(x);
        auto r = load_edge_model(write_tmp(x, "past.edge"));
        ASSERT_FALSE(r.ok());
        EXPECT_NE(r.message().find("section 'plan': runs past the end"), std::string::npos) << r.message();
    }
    {
        auto x = b;
        section(x, EdgeSectionKind::TokStrings).offset =
            section(x, EdgeSectionKind::Tokenizer).offset;  // tok_strings on top of tokenizer
        reseal(x);
        auto r = load_edge_model(write_tmp(x, "overlap.edge"));
        ASSERT_FALSE(r.ok());
        EXPECT_NE(r.message().find("section 'tok_strings': overlaps"), std::string::npos) << r.message();
    }
    {
        auto x = b;
        header(x)->section_count = 1000;
        reseal(x);
        auto r = load_edge_model(write_tmp(x, "count.edge"));
        ASSERT_FALSE(r.ok());
        EXPECT_NE(r.message().find("section count"), std::string::npos) << r.message();
    }
}

// Regression (issue 21): an .edge whose plan (execution program) section was cut short, with
// every checksum valid, used to load and run on the CPU path, which never read that section.
TEST(EdgeIntegrity, ACutProgramSectionIsRefusedOnEveryPath) {
    ASSERT_FALSE(compiled().empty());
    auto x = read_all(compiled());
    section(x, EdgeSectionKind::Program).bytes /=
        2;  // the section's span and checksum are unchanged: only its length lies
    reseal(x);
    const std::string p = write_tmp(x, "cut-plan.edge");
    EXPECT_TRUE(edge::test::fails_with(load_edge_model(p), {"cut-plan.edge", "section 'plan'", "not valid JSON"}));
    EXPECT_TRUE(edge::test::fails_with(load_model(p), {"cut-plan.edge", "section 'plan'"}));
    EXPECT_TRUE(edge::test::fails_with(load_engine(p), {"cut-plan.edge", "section 'plan'"}));
}

TEST(EdgeIntegrity, LoadModelRoutesDotEdgeWithABadMagicToTheEngineReader) {
    ASSERT_FALSE(compiled().empty());
    auto b = read_all(compiled());
    b[0] ^= 0x20;
    auto r = load_model(write_tmp(b, "magic.edge"));
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.message().find("section 'header': bad magic"), std::string::npos) << r.message();
}

namespace {
// The engine with the meta JSON edited by `edit`, rewritten in its section (the payload must still
// fit the section's span), its section checksum and the table and header resealed.
std::vector<uint8_t> with_meta(const std::vector<uint8_t>& b, const std::function<void(nlohmann::json&)>& edit) {
    auto x = b;
    EdgeSectionEntry& ms = section(x, EdgeSectionKind::Meta);
    auto meta = nlohmann::json::parse(x.begin() + long(ms.offset), x.begin() + long(ms.offset + ms.bytes));
    edit(meta);
    const std::string text = meta.dump();
    EXPECT_LE(text.size(), ms.span) << "the edited meta JSON no longer fits its section";
    if (text.size() > ms.span) return x;
    std::memset(x.data() + ms.offset, 0, size_t(ms.span));
    std::memcpy(x.data() + ms.offset, text.data(), text.size());
    ms.bytes = text.size();
    ms.checksum = xxh64(x.data() + ms.offset, size_t(ms.span));
    reseal(x);
    return x;
}
}  // namespace

// Regression (issue 21), found reading the section parsers that the resealing fuzz_edge now reaches:
// a tensor whose shape names more elements than 64 bits count overflowed the element count, and
// F32 [2^31, 2^31] needs 2^64 bytes, which wrapped to the 0 bytes the entry claimed.
TEST(EdgeIntegrity, AShapeLargerThanTheWeightsSectionIsRefusedNamingTheTensor) {
    ASSERT_FALSE(compiled().empty());
    const auto b = read_all(compiled());
    for (const auto& shape : {std::vector<int64_t>{int64_t(1) << 31, int64_t(1) << 31},
                              std::vector<int64_t>{int64_t(1) << 32, int64_t(1) << 32, 4}}) {
        std::string name;
        const auto x = with_meta(b, [&](nlohmann::json& meta) {
            for (auto& t : meta.at("tensors"))
                if (!t.contains("quant") && t.at("type") == "F32") {
                    name = t.at("name");
                    t["shape"] = shape;
                    t["nbytes"] = 0;
                    return;
                }
        });
        ASSERT_FALSE(name.empty()) << "no F32 tensor in the engine";
        EXPECT_TRUE(edge::test::fails_with(read_edge_file(write_tmp(x, "huge-shape.edge")),
                                           {"huge-shape.edge", "section 'meta'", "tensor '" + name + "'",
                                            "has more elements than its section can hold"}));
    }
}
