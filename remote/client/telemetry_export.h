// Exports of profile runs: CSV (one row per telemetry sample) and OpenTelemetry's JSON encoding
// (OTLP/JSON) of metrics and spans, as JSON Lines the way the OpenTelemetry Collector's file
// exporter writes them: one ExportMetricsServiceRequest line ({"resourceMetrics": ...}) and one
// ExportTraceServiceRequest line ({"resourceSpans": ...}). One resource per board.
//
// OTLP/JSON, not plain proto3 JSON: lowerCamelCase keys, trace and span ids as lower-case hex (not
// base64), enums as integers, 64-bit integers as decimal strings. Absent telemetry is absent: a
// sample without a value contributes no data point (and an empty CSV cell), never a zero.
// Field list and mapping: docs/remote.md ("Exports").
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "remote/client/profile.h"

namespace edge::client {

struct BoardRun {
    std::string board;  // the user's name for it
    const ProfileReport* report = nullptr;
};

// Header + one row per sample, boards in order.
std::string telemetry_csv(const std::vector<BoardRun>& runs);
// {"resourceMetrics": [...]}: gauges of every sampled quantity (a data point per sample carrying
// it), a cumulative monotonic sum of generated tokens and a cumulative histogram of token latency.
nlohmann::json otlp_metrics(const std::vector<BoardRun>& runs);
// {"resourceSpans": [...]}: per board a client span "profile" (the traceparent's parent id as its
// id), one child span per prompt, and one span per agent operation (the span ids the agent's log
// lines carry), whose log lines become span events.
nlohmann::json otlp_traces(const std::vector<BoardRun>& runs);
// Both, as two JSON lines.
std::string otlp_json_lines(const std::vector<BoardRun>& runs);

}  // namespace edge::client
