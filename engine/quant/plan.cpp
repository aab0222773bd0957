#include "plan.h"

#include <nlohmann/json.hpp>

#include "engine/core/json_util.h"
#include "engine/core/mapped_file.h"

using edge::model::LayerInfo;
using edge::model::list_layers;
using edge::model::Model;

namespace edge::quant {

namespace {

using ojson = nlohmann::ordered_json;

// True when object `o` has no `key`, or holds there a whole number in [lo, hi] (checked before
// any conversion to int, which a number like 1e30 would make undefined).
bool whole_in(const ojson& o, const char* key, int64_t lo, int64_t hi) {
    if (!o.is_object() || !o.contains(key)) return true;
    const ojson& v = o[key];
    if (v.is_number_unsigned())
        return v.get<uint64_t>() >= uint64_t(std::max<int64_t>(lo, 0)) && v.get<uint64_t>() <= uint64_t(hi);
    if (v.is_number_integer()) return v.get<int64_t>() >= lo && v.get<int64_t>() <= hi;
    return false;
}

Result<Precision> parse_precision(const std::string& s, const std::string& where) {
    if (s == "fp32" || s == "f32") return Precision::FP32;
    if (s == "fp16" || s == "f16") return Precision::FP16;
    if (s == "int8") return Precision::INT8;
    if (s == "int4") return Precision::INT4;
    return err(where, ": precision '", s, "' is not one of fp32, fp16, int8, int4");
}

Result<QMethod> parse_method(const std::string& s, const std::string& where) {
    if (s == "rtn") return QMethod::RTN;
    if (s == "awq") return QMethod::AWQ;
    if (s == "gptq") return QMethod::GPTQ;
    return err(where, ": method '", s, "' is not one of rtn, awq, gptq");
}

const char* method_name(QMethod m) { return m == QMethod::AWQ ? "awq" : m == QMethod::GPTQ ? "gptq" : "rtn"; }

Result<LayerRule> parse_rule(const ojson& j, const std::string& pattern, const std::string& where) {
    if (!j.is_object()) return err(where, ": expected an object of settings");
    LayerRule r;
    r.pattern = pattern;
    for (const auto& [key, v] : j.items()) {
        std::string w = where;
        w += ": \"" + key + "\"";
        if (key == "precision") {
            if (!v.is_string()) return err(w, " must be a string");
            auto p = parse_precision(v.get<std::string>(), where);
            if (!p.ok()) return p.error();
            r.precision = *p;
        } else if (key == "method") {
            if (!v.is_string()) return err(w, " must be a string");
            auto m = parse_method(v.get<std::string>(), where);
            if (!m.ok()) return m.error();
            r.method = *m;
        } else if (key == "group_size") {
            if (v.is_string() && (v == "channel" || v == "per_channel")) {
                r.grouping = QGrouping::PerChannel;
            } else if (v.is_number_integer() && v.get<int64_t>() > 0) {
                r.group_size = v.get<int64_t>();
            } else {
                return err(w, " must be a positive number of elements or \"channel\" (found ", json_excerpt(v), ")");
            }
        } else if (key == "grouping") {
            if (v == "flat")
                r.grouping = QGrouping::Flat;
            else if (v == "group")
                r.grouping = QGrouping::Group;
            else if (v == "channel" || v == "per_channel")
                r.grouping = QGrouping::PerChannel;
            else
                return err(w, " must be \"group\", \"channel\" or \"flat\" (found ", json_excerpt(v), ")");
        } else if (key == "symmetric") {
            if (!v.is_boolean()) return err(w, " must be true or false");
            r.symmetric = v.get<bool>();
        } else if (key == "clip") {
            if (!v.is_boolean()) return err(w, " must be true or false");
            r.clip = v.get<bool>();
        } else if (key == "scales") {
            if (v == "auto")
                r.scales = QuantSpec::Scales::Auto;
            else if (v == "fp32")
                r.scales = QuantSpec::Scales::F32;
            else if (v == "fp16")
                r.scales = QuantSpec::Scales::F16;
            else
                return err(w, " must be \"auto\", \"fp32\" or \"fp16\" (found ", json_excerpt(v), ")");
        } else if (key == "rounding") {
            if (v == "ggml")
                r.ggml_rounding = true;
            else if (v == "nearest")
                r.ggml_rounding = false;
            else
                return err(w, " must be \"nearest\" or \"ggml\" (found ", json_excerpt(v), ")");
        } else {
            return err(where, ": unknown setting \"", key,
                       "\" (known: precision, method, group_size, grouping, symmetric, clip, scales, rounding)");
        }
    }
    return r;
}

void apply_rule(LayerChoice& c, const LayerRule& r) {
    if (r.precision) c.precision = *r.precision;
    if (r.method) c.spec.method = *r.method;
    if (r.grouping) c.spec.grouping = *r.grouping;
    if (r.group_size) {
        c.spec.group_size = *r.group_size;
        if (!r.grouping && c.spec.grouping == QGrouping::PerChannel) c.spec.grouping = QGrouping::Group;
    }
    if (r.symmetric) c.spec.symmetric = *r.symmetric;
    if (r.clip) c.spec.clip = *r.clip;
    if (r.scales) c.spec.scales = *r.scales;
    if (r.ggml_rounding) c.spec.ggml_rounding = *r.ggml_rounding;
}

ojson rule_json(const LayerRule& r) {
    ojson j = ojson::object();
    if (r.precision) {
        static const char* names[] = {"fp32", "fp16", "int8", "int4"};
        j["precision"] = names[int(*r.precision)];
    }
    if (r.method) j["method"] = method_name(*r.method);
    if (r.grouping == QGrouping::PerChannel) j["group_size"] = "channel";
    if (r.grouping == QGrouping::Flat) j["grouping"] = "flat";
    if (r.group_size) j["group_size"] = *r.group_size;
    if (r.symmetric) j["symmetric"] = *r.symmetric;
    if (r.clip) j["clip"] = *r.clip;
    if (r.ggml_rounding) j["rounding"] = *r.ggml_rounding ? "ggml" : "nearest";
    if (r.scales)
        j["scales"] = *r.scales == QuantSpec::Scales::F16   ? "fp16"
                      : *r.scales == QuantSpec::Scales::F32 ? "fp32"
                                                            : "auto";
    return j;
}

}  // namespace

const char* precision_name(Precision p) {
    switch (p) {
        case Precision::FP32: return "fp32";
        case Precision::FP16: return "fp16";
        case Precision::INT8: return "int8";
        case Precision::INT4: return "int4";
    }
    return "?";
}

bool glob_match(std::string_view p, std::string_view n) {
    size_t pi = 0, ni = 0, star = std::string_view::npos, mark = 0;
    while (ni < n.size()) {
        if (pi < p.size() && (p[pi] == '?' || p[pi] == n[ni])) {
            ++pi;
            ++ni;
        } else if (pi < p.size() && p[pi] == '*') {
            star = pi++;
            mark = ni;
        } else if (star != std::string_view::npos) {
            pi = star + 1;
            ni = ++mark;
        } else {
            return false;
        }
    }
    while (pi < p.size() && p[pi] == '*') ++pi;
    return pi == p.size();
}

Result<QuantPlan> parse_plan(std::string_view text, const std::string& source) {
    try {
        auto parsed = parse_ordered_json(text, source);
        if (!parsed) return parsed.error();
        const ojson& j = *parsed;
        if (!j.is_object()) return err(source, ": a plan is a JSON object");
        QuantPlan p;
        p.source = source;
        const auto rule_where = [&](const std::string& pat) { return source + ": layer rule '" + pat + "'"; };
        for (const auto& [key, v] : j.items()) {
            if (key == "version") {
                if (v != 1) return err(source, ": plan version ", json_excerpt(v), " is not supported (expected 1)");
            } else if (key == "default") {
                auto r = parse_rule(v, "", source + ": default");
                if (!r.ok()) return r.error();
                p.defaults = *r;
            } else if (key == "layers") {
                if (v.is_object()) {
                    for (const auto& [pat, rv] : v.items()) {
                        auto r = parse_rule(rv, pat, rule_where(pat));
                        if (!r.ok()) return r.error();
                        p.rules.push_back(*r);
                    }
                } else if (v.is_array()) {
                    for (const auto& rv : v) {
                        if (!rv.is_object() || !rv.contains("match") || !rv["match"].is_string())
                            return err(source, ": each entry of \"layers\" needs a \"match\" pattern");
                        ojson settings = rv;
                        settings.erase("match");
                        const std::string pat = rv["match"].get<std::string>();
                        auto r = parse_rule(settings, pat, rule_where(pat));
                        if (!r.ok()) return r.error();
                        p.rules.push_back(*r);
                    }
                } else {
                    return err(source, ": \"layers\" must be an object (pattern -> settings) or an array");
                }
            } else if (key == "keep") {
                if (!v.is_array()) return err(source, ": \"keep\" must be an array of layer names or patterns");
                for (const auto& k : v) {
                    if (!k.is_string()) return err(source, ": \"keep\" entries must be strings");
                    p.keep.push_back(k.get<std::string>());
                }
            } else if (key == "keep_precision") {
                auto pr = parse_precision(v.is_string() ? v.get<std::string>() : json_excerpt(v),
                                          source + ": keep_precision");
                if (!pr.ok()) return pr.error();
                p.keep_precision = *pr;
            } else if (key == "gptq") {
                p.gptq.damp = v.value("damp", p.gptq.damp);
                if (!whole_in(v, "block", 1, 1 << 20))
                    return err(source, ": gptq block must be a whole number in 1..1048576, found ",
                               json_excerpt(v["block"]));
                p.gptq.block = v.value("block", p.gptq.block);
                p.gptq.act_order = v.value("act_order", p.gptq.act_order);
                if (!(p.gptq.damp >= 0.0 && p.gptq.damp < 1.0) || p.gptq.block <= 0)
                    return err(source, ": gptq damp must be in [0, 1) and block positive");
            } else if (key == "awq") {
                // Checked before it is converted: a JSON number such as 1e30 has no int value.
                if (!whole_in(v, "grid", 1, 1000))
                    return err(source, ": awq grid must be a whole number in 1..1000, found ", json_excerpt(v["grid"]));
                p.awq.grid = v.value("grid", p.awq.grid);
            } else if (key == "prune" || key == "comment" || key == "name") {
                // owned by other tools / free text
            } else {
                return err(source, ": unknown key \"", key, "\"");
            }
        }
        return p;
    } catch (const std::exception& e) {
        return err(source, ": malformed plan: ", e.what());
    }
}

Result<QuantPlan> load_plan(const std::string& path) {
    auto text = read_text_file(path);
    if (!text.ok()) return text.error();
    return parse_plan(*text, path);
}

std::string plan_to_json(const QuantPlan& p) {
    ojson j;
    j["version"] = 1;
    if (p.defaults) j["default"] = rule_json(*p.defaults);
    ojson layers = ojson::object();
    for (const LayerRule& r : p.rules) layers[r.pattern] = rule_json(r);
    if (!p.rules.empty()) j["layers"] = layers;
    if (!p.keep.empty()) j["keep"] = p.keep;
    if (p.keep_precision != Precision::FP32) j["keep_precision"] = precision_name(p.keep_precision);
    j["gptq"] = {{"damp", p.gptq.damp}, {"block", p.gptq.block}, {"act_order", p.gptq.act_order}};
    j["awq"] = {{"grid", p.awq.grid}};
    return j.dump(2);
}

QuantPlan uniform_plan(Precision p, QMethod method, int64_t group_size, bool symmetric, QGrouping grouping) {
    QuantPlan plan;
    LayerRule r;
    r.precision = p;
    if (p == Precision::INT8 || p == Precision::INT4) {
        r.method = method;
        r.grouping = grouping;
        if (grouping != QGrouping::PerChannel) r.group_size = group_size;
        r.symmetric = symmetric;
    }
    plan.defaults = r;
    plan.source = "<uniform plan>";
    return plan;
}

Result<std::vector<LayerChoice>> resolve_plan(const Model& m, const QuantPlan& p) {
    const std::vector<LayerInfo> layers = list_layers(m);
    if (layers.empty()) return err(m.source_path, ": the model has no layers to quantize");
    auto names_hint = [&] {
        std::string s;
        for (size_t i = 0; i < layers.size() && i < 4; ++i) s += (i ? ", " : "") + layers[i].name;
        return s + (layers.size() > 4 ? ", ..." : "");
    };
    auto check_matches = [&](const std::string& pat, const char* what) -> Status {
        for (const LayerInfo& l : layers)
            if (glob_match(pat, l.name)) return {};
        return err(p.source, ": ", what, " '", pat, "' names no layer of ", m.source_path, " (layers are ",
                   names_hint(), ")");
    };
    for (const LayerRule& r : p.rules) EDGE_TRY(check_matches(r.pattern, "layer rule"));
    for (const std::string& k : p.keep) EDGE_TRY(check_matches(k, "keep entry"));

    std::vector<LayerChoice> out;
    for (const LayerInfo& l : layers) {
        LayerChoice c;
        c.layer = l.name;
        c.tensor = l.tensor;
        c.block = l.block;
        c.kind = l.kind;
        c.spec = QuantSpec{};
        const LayerRule* last = nullptr;
        if (p.defaults) {
            apply_rule(c, *p.defaults);
            last = &*p.defaults;
        }
        for (const LayerRule& r : p.rules)
            if (glob_match(r.pattern, l.name)) {
                apply_rule(c, r);
                last = &r;
            }
        bool kept = false;
        for (const std::string& k : p.keep) kept = kept || glob_match(k, l.name);
        if (kept) c.precision = p.keep_precision;
        const std::string who = p.source + ": layer " + l.name +
                                (last && !last->pattern.empty() ? " (rule '" + last->pattern + "')" : std::string());
        if (c.precision == Precision::INT8 || c.precision == Precision::INT4) {
            c.spec.bits = c.precision == Precision::INT8 ? 8 : 4;
            const int64_t cols = l.shape.empty() ? 0 : l.shape.back();
            const int64_t numel = l.params;
            if (c.spec.grouping == QGrouping::Group && c.spec.group_size > cols)
                return err(who, ": group size ", c.spec.group_size, " is larger than a row (", cols, " elements)");
            if (c.spec.grouping == QGrouping::Flat && c.spec.group_size > numel)
                return err(who, ": group size ", c.spec.group_size, " is larger than the tensor (", numel,
                           " elements)");
            if (c.spec.method == QMethod::GPTQ && c.spec.grouping == QGrouping::Flat)
                return err(who, ": gptq needs per-channel or per-row groups, not flat groups");
            if (c.spec.ggml_rounding &&
                (c.spec.method != QMethod::RTN || !c.spec.symmetric || c.spec.grouping != QGrouping::Group ||
                 c.spec.group_size != 32 || c.spec.clip || c.spec.scales == QuantSpec::Scales::F32))
                return err(who,
                           ": rounding \"ggml\" makes llama.cpp's Q8_0/Q4_0 blocks: rtn, symmetric, groups of 32, "
                           "half scales, no clip");
            if (c.spec.ggml_rounding && cols % 32 != 0)
                return err(who, ": rounding \"ggml\" needs rows of whole 32-element blocks; this layer's rows hold ",
                           cols, " elements (keep it at fp16, as llama.cpp does)");
            if (c.spec.method != QMethod::RTN && c.kind == "output" && m.config.tied_embeddings)
                return err(who, ": ", method_name(c.spec.method),
                           " cannot be applied to the output head tied to the token embedding; use rtn or keep it");
        } else {
            if (!kept && last &&
                (last->method.value_or(QMethod::RTN) != QMethod::RTN || last->group_size || last->symmetric ||
                 last->grouping || last->clip || last->ggml_rounding.value_or(false)))
                return err(who, ": ", precision_name(c.precision),
                           " takes no method, group size or symmetry (impossible combination)");
            c.spec.method = QMethod::RTN;
        }
        out.push_back(std::move(c));
    }
    return out;
}

}  // namespace edge::quant
