// `edgestudio-cli profile --otlp FILE --csv FILE --traceparent TP` over the real loopback sshd:
// the OTLP/JSON lines parse, strictly (no unknown field), into OpenTelemetry's own protobuf
// messages (the .proto files scripts/install-deps.sh installs, compiled at run time by
// libprotobuf), with the OTLP/JSON specifics checked on the raw JSON (hex ids of the right length,
// integer enums, 64-bit integers as strings, lowerCamelCase keys); the trace given on the command
// line reaches the agent (its log lines and spans carry it); the CSV has a row per sample with
// absent values left empty.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "remote_test_util.h"
#include "test_support.h"

#if defined(EDGE_CLI_PATH) && defined(EDGE_HAVE_PROTOBUF)
#include <google/protobuf/compiler/importer.h>
#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/util/json_util.h>

using namespace edge;
namespace fs = std::filesystem;
namespace pb = google::protobuf;
using nlohmann::json;

namespace {

class Collector : public pb::compiler::MultiFileErrorCollector {
public:
    void AddError(const std::string& file, int line, int col, const std::string& msg) override {
        text += file + ":" + std::to_string(line) + ":" + std::to_string(col) + ": " + msg + "\n";
    }
    std::string text;
};

// OpenTelemetry's protos, compiled at run time.
class OtlpSchema {
public:
    OtlpSchema() : importer_(&tree_, &errors_) { tree_.MapPath("", EDGE_OTLP_PROTO_DIR); }
    const pb::Descriptor* message(const std::string& file, const std::string& type) {
        if (!importer_.Import(file)) return nullptr;
        return importer_.pool()->FindMessageTypeByName(type);
    }
    std::unique_ptr<pb::Message> make(const pb::Descriptor* d) {
        return std::unique_ptr<pb::Message>(factory_.GetPrototype(d)->New());
    }
    std::string errors() const { return errors_.text; }

private:
    pb::compiler::DiskSourceTree tree_;
    Collector errors_;
    pb::compiler::Importer importer_;
    pb::DynamicMessageFactory factory_;
};

std::string base64(const std::vector<uint8_t>& b) {
    static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    for (size_t i = 0; i < b.size(); i += 3) {
        uint32_t v =
            uint32_t(b[i]) << 16 | (i + 1 < b.size() ? uint32_t(b[i + 1]) << 8 : 0) | (i + 2 < b.size() ? b[i + 2] : 0);
        out += t[v >> 18 & 63];
        out += t[v >> 12 & 63];
        out += i + 1 < b.size() ? t[v >> 6 & 63] : '=';
        out += i + 2 < b.size() ? t[v & 63] : '=';
    }
    return out;
}

bool lower_hex(const std::string& s, size_t n) {
    if (s.size() != n) return false;
    for (char c : s)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    return true;
}

bool digits(const std::string& s) {
    if (s.empty()) return false;
    for (char c : s)
        if (c < '0' || c > '9') return false;
    return true;
}

// Checks the OTLP/JSON rules proto3's JSON mapping does not enforce, collecting violations, and
// turns the hex ids into the base64 libprotobuf expects for bytes fields.
void check_and_convert(json& j, const std::string& where, std::vector<std::string>& bad) {
    static const std::set<std::string> ids16 = {"traceId"}, ids8 = {"spanId", "parentSpanId"};
    static const std::set<std::string> int64s = {"timeUnixNano", "startTimeUnixNano", "endTimeUnixNano", "asInt",
                                                 "count",        "intValue"};
    static const std::set<std::string> enums = {"kind", "code", "aggregationTemporality"};
    if (j.is_array()) {
        for (size_t i = 0; i < j.size(); ++i) check_and_convert(j[i], where + "[" + std::to_string(i) + "]", bad);
        return;
    }
    if (!j.is_object()) return;
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string& k = it.key();
        std::string at = where;
        at += '.';
        at += k;
        if (k.find('_') != std::string::npos) bad.push_back(at + ": not lowerCamelCase");
        json& v = it.value();
        if (ids16.count(k) || ids8.count(k)) {
            size_t n = ids16.count(k) ? 16 : 8;
            if (!v.is_string() || !lower_hex(v.get<std::string>(), 2 * n)) {
                bad.push_back(at + ": not " + std::to_string(2 * n) + " lower-case hex digits: " + v.dump());
                continue;
            }
            std::string h = v.get<std::string>();
            std::vector<uint8_t> b;
            for (size_t i = 0; i < h.size(); i += 2)
                b.push_back(static_cast<uint8_t>(std::stoi(h.substr(i, 2), nullptr, 16)));
            v = base64(b);
        } else if (int64s.count(k)) {
            if (!v.is_string() || !digits(v.get<std::string>()))
                bad.push_back(at + ": a 64-bit integer must be a decimal string: " + v.dump());
        } else if (k == "bucketCounts") {
            for (const auto& c : v)
                if (!c.is_string() || !digits(c.get<std::string>()))
                    bad.push_back(at + ": bucket count not a decimal string");
        } else if (enums.count(k)) {
            if (!v.is_number_integer()) bad.push_back(at + ": enum must be an integer: " + v.dump());
        } else {
            check_and_convert(v, at, bad);
        }
    }
}

// Parses one OTLP/JSON line into `type` (strict: unknown fields are errors).
std::unique_ptr<pb::Message> parse_strict(OtlpSchema& schema, const std::string& file, const std::string& type, json j,
                                          std::vector<std::string>& bad) {
    check_and_convert(j, type, bad);
    const pb::Descriptor* d = schema.message(file, type);
    if (!d) {
        ADD_FAILURE() << "cannot compile " << EDGE_OTLP_PROTO_DIR << "/" << file << ":\n" << schema.errors();
        return nullptr;
    }
    auto m = schema.make(d);
    pb::util::JsonParseOptions o;
    o.ignore_unknown_fields = false;
    auto st = pb::util::JsonStringToMessage(j.dump(), m.get(), o);
    if (!st.ok()) {
        bad.push_back(type + ": " + st.ToString());
        return nullptr;
    }
    return m;
}

const pb::Message& sub(const pb::Message& m, const std::string& field, int i = -1) {
    const pb::FieldDescriptor* f = m.GetDescriptor()->FindFieldByName(field);
    EXPECT_NE(f, nullptr) << field;
    return i < 0 ? m.GetReflection()->GetMessage(m, f) : m.GetReflection()->GetRepeatedMessage(m, f, i);
}
int count(const pb::Message& m, const std::string& field) {
    return m.GetReflection()->FieldSize(m, m.GetDescriptor()->FindFieldByName(field));
}
std::string str(const pb::Message& m, const std::string& field) {
    return m.GetReflection()->GetString(m, m.GetDescriptor()->FindFieldByName(field));
}

}  // namespace

TEST(Otlp, ProfileExportsValidOtlpJsonCsvAndCarriesTheTrace) {
    std::string model = test::shared("models/stories260K/stories260K.gguf");
    EDGE_REQUIRE_SHARED(model);
    ASSERT_TRUE(fs::exists(std::string(EDGE_OTLP_PROTO_DIR) + "/opentelemetry/proto/trace/v1/trace.proto"))
        << EDGE_OTLP_PROTO_DIR << " lacks the OpenTelemetry protos (scripts/install-deps.sh installs them)";
    std::string why;
    auto sshd = test::Sshd::start(&why);
    ASSERT_TRUE(sshd) << why;
    fs::path dir = sshd->dir;
    std::string kh = (dir / "known_hosts").string();
    std::ofstream(kh) << sshd->known_hosts_line() << "\n";
    std::vector<std::string> board = {"--board",       sshd->user + "@127.0.0.1:" + std::to_string(sshd->port),
                                      "--identity",    sshd->client_key,
                                      "--known-hosts", kh,
                                      "--root",        (dir / "root").string()};
    auto with = [&](std::vector<std::string> a) {
        a.insert(a.end(), board.begin(), board.end());
        return test::run_shell(test::command_line(EDGE_CLI_PATH, a), dir);
    };
    auto d = with({"deploy", model, "--agent", EDGE_AGENT_PATH, "--version", "v1"});
    ASSERT_EQ(d.rc, 0) << d.err;

    const std::string trace = "4bf92f3577b34da6a3ce929d0e0e4736", caller = "00f067aa0ba902b7";
    const std::string tp = "00-" + trace + "-" + caller + "-01";
    fs::path otlp = dir / "run.otlp.jsonl", csv = dir / "run.csv";
    auto p = with({"profile", "-p", "Once upon a time", "-p", "Tom had a red ball", "-n", "24", "--threads", "1",
                   "--json", "--otlp", otlp.string(), "--csv", csv.string(), "--traceparent", tp});
    ASSERT_EQ(p.rc, 0) << p.err;
    json pj = json::parse(p.out, nullptr, false);
    ASSERT_TRUE(pj.is_array() && pj.size() == 1) << p.out;
    const size_t samples = pj[0]["summary"]["samples"].get<size_t>();
    ASSERT_GT(samples, 0u);

    // Trace context, end to end: the requests carried the caller's trace id; every log line the
    // agent wrote while serving them carries it and the agent's own span id.
    const std::string sent = pj[0]["traceparent"];
    EXPECT_EQ(sent.substr(3, 32), trace);
    const std::string client_span = sent.substr(36, 16);
    EXPECT_NE(client_span, caller) << "the client opens its own span under the caller's";
    std::set<std::string> agent_spans;
    for (const auto& l : pj[0]["logs"]) {
        if (l["trace_id"] == std::string(32, '0')) {
            EXPECT_EQ(l["span_id"], std::string(16, '0')) << l.dump();  // outside a request
            continue;
        }
        EXPECT_EQ(l["trace_id"], trace) << l.dump();
        EXPECT_NE(l["span_id"], client_span);
        EXPECT_NE(l["span_id"], std::string(16, '0'));
        agent_spans.insert(l["span_id"].get<std::string>());
    }
    EXPECT_EQ(agent_spans.size(), 2u) << "one span for load-engine, one for run-workload: " << pj[0]["logs"].dump(1);

    // OTLP/JSON: two lines, metrics then spans.
    std::ifstream f(otlp);
    std::string line1, line2, extra;
    ASSERT_TRUE(std::getline(f, line1) && std::getline(f, line2)) << otlp;
    EXPECT_FALSE(std::getline(f, extra) && !extra.empty());
    json mj = json::parse(line1, nullptr, false), tj = json::parse(line2, nullptr, false);
    ASSERT_TRUE(mj.contains("resourceMetrics")) << line1.substr(0, 200);
    ASSERT_TRUE(tj.contains("resourceSpans")) << line2.substr(0, 200);

    OtlpSchema schema;
    std::vector<std::string> bad;
    auto metrics = parse_strict(schema, "opentelemetry/proto/collector/metrics/v1/metrics_service.proto",
                                "opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest", mj, bad);
    auto traces = parse_strict(schema, "opentelemetry/proto/collector/trace/v1/trace_service.proto",
                               "opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest", tj, bad);
    for (const auto& b : bad) ADD_FAILURE() << b;
    ASSERT_TRUE(metrics && traces);

    // Metrics: one data point per sample for the token latency; kv hit rate absent, not zero.
    const pb::Message& sm = sub(sub(*metrics, "resource_metrics", 0), "scope_metrics", 0);
    std::set<std::string> names;
    for (int i = 0; i < count(sm, "metrics"); ++i) {
        const pb::Message& m = sub(sm, "metrics", i);
        names.insert(str(m, "name"));
        if (str(m, "name") == "edge.token.latency") {
            EXPECT_EQ(count(sub(m, "gauge"), "data_points"), int(samples));
        }
        if (str(m, "name") == "edge.token.latency.distribution") {
            const pb::Message& hp = sub(sub(m, "histogram"), "data_points", 0);
            EXPECT_EQ(hp.GetReflection()->GetUInt64(hp, hp.GetDescriptor()->FindFieldByName("count")), samples);
        }
    }
    for (const char* n :
         {"edge.token.latency", "edge.ttft", "edge.tokens_per_second", "process.memory.rss", "edge.kv.blocks.used",
          "edge.tokens.generated", "edge.token.latency.distribution", "edge.kv.hit_rate"})
        EXPECT_TRUE(names.count(n)) << n;
    EXPECT_FALSE(names.count("edge.kv.evictions")) << "the contiguous cache evicts nothing: absent, not zero";

    // Spans: the client's span under the caller's, the agent's two spans under the client's, a
    // span per prompt; ids decoded to 16 and 8 bytes.
    const pb::Message& ss = sub(sub(*traces, "resource_spans", 0), "scope_spans", 0);
    int agent = 0, prompts = 0, roots = 0;
    for (int i = 0; i < count(ss, "spans"); ++i) {
        const pb::Message& s = sub(ss, "spans", i);
        EXPECT_EQ(str(s, "trace_id").size(), 16u);
        EXPECT_EQ(str(s, "span_id").size(), 8u);
        const json& js = tj["resourceSpans"][0]["scopeSpans"][0]["spans"][i];
        EXPECT_EQ(js["traceId"], trace);
        std::string name = str(s, "name");
        if (name == "profile") {
            ++roots;
            EXPECT_EQ(js["spanId"], client_span);
            EXPECT_EQ(js["parentSpanId"], caller);
        } else if (name.rfind("edge-agent ", 0) == 0) {
            ++agent;
            EXPECT_TRUE(agent_spans.count(js["spanId"].get<std::string>())) << js.dump();
            EXPECT_EQ(js["parentSpanId"], client_span);
            EXPECT_GT(count(s, "events"), 0);
        } else if (name.rfind("prompt ", 0) == 0) {
            ++prompts;
            EXPECT_EQ(js["parentSpanId"], client_span);
            EXPECT_LE(std::stoull(js["startTimeUnixNano"].get<std::string>()),
                      std::stoull(js["endTimeUnixNano"].get<std::string>()));
        }
    }
    EXPECT_EQ(roots, 1);
    EXPECT_EQ(agent, 2);
    EXPECT_EQ(prompts, 2);

    // The checks can fail: an unknown field, a string enum, base64 ids are refused.
    {
        json m2 = tj;
        m2["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["kindd"] = 1;
        std::vector<std::string> b2;
        EXPECT_FALSE(parse_strict(schema, "opentelemetry/proto/collector/trace/v1/trace_service.proto",
                                  "opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest", m2, b2));
        json m3 = tj;
        m3["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["kind"] = "SPAN_KIND_CLIENT";
        m3["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"] = "S/kvNXezTaajzpKdDg5HNg==";
        std::vector<std::string> b3;
        (void)parse_strict(schema, "opentelemetry/proto/collector/trace/v1/trace_service.proto",
                           "opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest", m3, b3);
        EXPECT_EQ(b3.size(), 2u);
    }

    // CSV: a header and a row per sample; absent values are empty cells.
    std::ifstream c(csv);
    std::string header, row;
    ASSERT_TRUE(std::getline(c, header));
    std::vector<std::string> cols;
    std::stringstream hs(header);
    for (std::string col; std::getline(hs, col, ',');) cols.push_back(col);
    auto col = [&](const std::string& n) { return size_t(std::find(cols.begin(), cols.end(), n) - cols.begin()); };
    ASSERT_LT(col("edge.token.latency_ms"), cols.size()) << header;
    ASSERT_LT(col("edge.kv.hit_rate"), cols.size()) << header;
    ASSERT_LT(col("edge.kv.evictions"), cols.size()) << header;
    size_t rows = 0;
    while (std::getline(c, row)) {
        std::vector<std::string> cells;
        std::stringstream rs(row);
        for (std::string cell; std::getline(rs, cell, ',');) cells.push_back(cell);
        if (row.back() == ',') cells.push_back("");
        ASSERT_EQ(cells.size(), cols.size()) << row;
        EXPECT_EQ(cells[0], pj[0]["board"].get<std::string>());
        EXPECT_GT(std::stod(cells[col("edge.token.latency_ms")]), 0.0) << row;
        EXPECT_FALSE(cells[col("edge.kv.hit_rate")].empty()) << row;
        EXPECT_TRUE(cells[col("edge.kv.evictions")].empty()) << row;  // absent: an empty cell, never 0
        ++rows;
    }
    EXPECT_EQ(rows, samples);
}

#elif defined(EDGE_CLI_PATH)
TEST(Otlp, NeedsLibprotobuf) {
    FAIL()
        << "edge_remote_tests was built without libprotobuf (libprotobuf-dev): the OTLP/JSON export is not validated";
}
#endif
