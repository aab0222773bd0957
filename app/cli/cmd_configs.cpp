// `configs add|list|show|diff|compile PROJECT ...`: the studio's configurations from the command
// line, on the studio's own project file (*.edgeproj, views/models/project.h), so a pipeline does
// what the Validation and Pareto pages do and the studio opens the result:
//   configs add PROJECT --plan P [--model M] [--text T]   validate a plan into a new configuration
//   configs list PROJECT                                  quality, size, verdict, engines, boards
//   configs show PROJECT NAME                             one configuration, its plan per layer
//   configs diff PROJECT A B                              plan and figure differences
//   configs compile PROJECT NAME [--target cpu]           its engine, recorded in the project
// Built when the studio's item models are (QtCore): the project format is theirs.
#include <CLI/CLI.hpp>

#include <QFileInfo>
#include <QJsonDocument>

#include <cstdio>
#include <map>

#include "app/cli/common.h"
#include "views/models/board_controller.h"
#include "views/models/configuration_model.h"
#include "views/models/layer_plan.h"
#include "views/models/model_document.h"
#include "views/models/project.h"
#include "views/models/validation_run.h"

using edge::views::Configuration;
using edge::views::ConfigurationModel;
using edge::views::PlanDiffModel;
using edge::views::ProjectData;

namespace edge::cli {

namespace {

struct ConfigsArgs {
    std::string project, plan, model, text, calib, name, a, b, target = "cpu", out, tokenizer;
    std::string calib_select = "all";
    int parts = 6, calib_samples = 16, calib_sequences = 8, calib_len = 64;
    uint64_t seed = 1;
    bool json = false;
};

QString qs(const std::string& s) { return QString::fromStdString(s); }
std::string ss(const QString& s) { return s.toStdString(); }

Result<ProjectData> read_project(const std::string& path) {
    ProjectData p;
    if (const auto r = edge::views::loadProjectFile(qs(path), &p); !r) return err(ss(r.message()));
    return p;
}

Status write_project(const std::string& path, const ProjectData& p) {
    if (const auto r = edge::views::saveProjectFile(qs(path), p); !r) return err(ss(r.message()));
    return {};
}

Result<size_t> find_config(const ProjectData& p, const std::string& project, const std::string& name) {
    for (size_t i = 0; i < p.configurations.size(); ++i)
        if (ss(p.configurations[i].name) == name) return i;
    std::string known;
    for (const auto& c : p.configurations) known += (known.empty() ? "" : ", ") + ss(c.name);
    return err(project, ": no configuration named ", name,
               known.empty() ? " (it has none)" : " (it has " + known + ")");
}

// The project's model opened as the studio opens it (lazily) with its layers.
Result<std::shared_ptr<edge::views::LoadedModel>> open_model(const std::string& path, const std::string& tokenizer) {
    auto loaded = load(path, tokenizer, true, Weights::Lazy);
    if (!loaded.ok()) return loaded.error();
    auto m = std::make_shared<edge::views::LoadedModel>();
    m->model = *loaded->model;
    m->layers = model::list_layers(m->model);
    return m;
}

nlohmann::json summary_json(const Configuration& c) {
    nlohmann::json engines = nlohmann::json::array(), boards = nlohmann::json::array();
    for (const auto& e : c.engines)
        engines.push_back(
            {{"target", ss(e.target)}, {"path", ss(e.path)}, {"sha256", ss(e.sha256)}, {"bytes", e.bytes}});
    for (const auto& m : c.measurements)
        boards.push_back({{"board", ss(m.board)},
                          {"engine_sha256", ss(m.engineSha256)},
                          {"tpot_p50_ms", m.tpotP50Ms},
                          {"tpot_p99_ms", m.tpotP99Ms},
                          {"ttft_ms", m.ttftMs},
                          {"tokens_per_s", m.tokensPerS},
                          {"peak_rss_mib", m.peakRssMiB}});
    nlohmann::json failures = nlohmann::json::array();
    for (const QString& f : c.failures) failures.push_back(ss(f));
    return {{"name", ss(c.name)},   {"ppl", c.ppl},       {"ppl_ref", c.pplRef},       {"kl_mean", c.klMean},
            {"top1", c.top1},       {"bytes", c.bytes},   {"fp32_bytes", c.fp32Bytes}, {"passed", c.passed},
            {"failures", failures}, {"engines", engines}, {"measurements", boards},    {"decode_ms", c.decodeMs}};
}

void print_summary_line(const Configuration& c) {
    std::string engines, boards;
    for (const auto& e : c.engines) engines += (engines.empty() ? "" : ",") + ss(e.target);
    if (const auto* m = c.measurement()) {
        char b[96];
        std::snprintf(b, sizeof b, "%s %.2f ms/token", ss(m->board).c_str(), m->tpotP50Ms);
        boards = b;
    }
    std::printf("%-6s %9.4f %9.4f %7.1f%% %10s  %-7s %-10s %s\n", ss(c.name).c_str(), c.ppl, c.klMean, 100.0 * c.top1,
                human_bytes(double(c.bytes)).c_str(), c.passed ? "pass" : "FAIL",
                engines.empty() ? "-" : engines.c_str(), boards.empty() ? "-" : boards.c_str());
}

void print_header() {
    std::printf("%-6s %9s %9s %8s %10s  %-7s %-10s %s\n", "name", "PPL", "KL", "top-1", "size", "verdict", "engines",
                "board (newest, TPOT p50)");
}

int run_add(const ConfigsArgs& a) {
    ProjectData p;
    if (QFileInfo::exists(qs(a.project))) {
        auto r = read_project(a.project);
        if (!r.ok()) return fail(r.error());
        p = std::move(r).value();
        if (!a.model.empty() &&
            QFileInfo(qs(a.model)).canonicalFilePath() != QFileInfo(p.modelPath).canonicalFilePath())
            return fail(err(a.project, ": the project is about ", ss(p.modelPath), ", not ", a.model));
    } else {
        if (a.model.empty()) return fail(err(a.project, ": a new project needs --model MODEL"));
        p.modelPath = QFileInfo(qs(a.model)).absoluteFilePath();
        p.tokenizer = qs(a.tokenizer);
    }
    auto m = open_model(ss(p.modelPath), ss(p.tokenizer));
    if (!m.ok()) return fail(m.error());
    std::vector<edge::views::LayerSetting> settings;
    if (const auto r = edge::views::loadPlanFile(qs(a.plan), (*m)->model, (*m)->layers, &settings); !r)
        return fail(ss(r.message()));
    edge::views::ValidationSettings vs;
    vs.textPath = a.text.empty() ? p.evaluationText : QFileInfo(qs(a.text)).absoluteFilePath();
    if (vs.textPath.isEmpty()) return fail(err(a.project, ": no evaluation text: pass --text TEXT"));
    vs.calibPath = a.calib.empty() ? QString() : QFileInfo(qs(a.calib)).absoluteFilePath();
    vs.maxParts = a.parts;
    vs.thresholds = p.thresholds;
    vs.calibSelect = qs(a.calib_select);
    vs.calibSamples = a.calib_samples;
    vs.calibSeed = a.seed;
    vs.calibSequences = a.calib_sequences;
    vs.calibLength = a.calib_len;
    ProgressBar bar(!a.json);
    auto outcome = edge::views::runValidation(*m, settings, vs, bar.progress());
    bar.finish();
    if (!outcome.ok()) return fail(outcome.error());
    ConfigurationModel list;
    list.setConfigurations(p.configurations);
    const QString name = a.name.empty() ? list.nextName() : qs(a.name);
    for (const auto& c : p.configurations)
        if (c.name == name) return fail(err(a.project, ": a configuration named ", a.name, " exists"));
    Configuration c = edge::views::configurationFrom(*outcome, **m, vs, name);
    p.configurations.push_back(c);
    if (p.evaluationText.isEmpty()) p.evaluationText = vs.textPath;
    p.layers = c.layers;
    p.plan = c.settings;
    if (auto s = write_project(a.project, p); !s.ok()) return fail(s.error());
    if (a.json) {
        print_json(summary_json(c));
        return kOk;
    }
    print_header();
    print_summary_line(c);
    for (const QString& f : c.failures) std::printf("  failed: %s\n", ss(f).c_str());
    std::printf("added to %s\n", a.project.c_str());
    return kOk;
}

int run_list(const ConfigsArgs& a) {
    auto p = read_project(a.project);
    if (!p.ok()) return fail(p.error());
    if (a.json) {
        nlohmann::json j = nlohmann::json::array();
        for (const auto& c : p->configurations) j.push_back(summary_json(c));
        print_json({{"model", ss(p->modelPath)}, {"configurations", j}});
        return kOk;
    }
    std::printf("%s: %s, %zu configuration(s)\n", a.project.c_str(), ss(p->modelPath).c_str(),
                p->configurations.size());
    print_header();
    for (const auto& c : p->configurations) print_summary_line(c);
    return kOk;
}

int run_show(const ConfigsArgs& a) {
    auto p = read_project(a.project);
    if (!p.ok()) return fail(p.error());
    auto i = find_config(*p, a.project, a.name);
    if (!i.ok()) return fail(i.error());
    const Configuration& c = p->configurations[*i];
    if (a.json) {
        nlohmann::json j = summary_json(c);
        j["configuration"] = nlohmann::json::parse(
            QJsonDocument(edge::views::configurationToJson(c)).toJson(QJsonDocument::Compact).toStdString());
        print_json(j);
        return kOk;
    }
    print_header();
    print_summary_line(c);
    if (!c.calibration.isEmpty()) std::printf("calibration: %s\n", ss(c.calibration).c_str());
    std::printf("plan (%zu layers):\n", c.settings.size());
    for (size_t l = 0; l < c.settings.size() && l < c.layers.size(); ++l)
        std::printf("  %-22s %s\n", ss(c.layers[l]).c_str(), ss(PlanDiffModel::settingText(c.settings[l])).c_str());
    for (const auto& e : c.engines)
        std::printf("engine %-10s %s  sha256 %s\n", ss(e.target).c_str(), ss(e.path).c_str(), ss(e.sha256).c_str());
    for (const auto& m : c.measurements)
        std::printf("board  %-10s TPOT p50 %.2f ms, p99 %.2f ms, TTFT %.1f ms, %.1f tokens/s, peak RSS %.0f MiB\n",
                    ss(m.board).c_str(), m.tpotP50Ms, m.tpotP99Ms, m.ttftMs, m.tokensPerS, m.peakRssMiB);
    return kOk;
}

int run_diff(const ConfigsArgs& a) {
    auto p = read_project(a.project);
    if (!p.ok()) return fail(p.error());
    auto ia = find_config(*p, a.project, a.a);
    if (!ia.ok()) return fail(ia.error());
    auto ib = find_config(*p, a.project, a.b);
    if (!ib.ok()) return fail(ib.error());
    const Configuration &ca = p->configurations[*ia], &cb = p->configurations[*ib];
    PlanDiffModel diff;
    diff.setPair(&ca, &cb);
    nlohmann::json layers = nlohmann::json::array();
    for (int r = 0; r < diff.rowCount(); ++r) {
        if (!diff.index(r, 0).data(PlanDiffModel::DiffRole).toBool() ||
            diff.index(r, 0).data(PlanDiffModel::FigureRole).toBool())
            continue;  // the figures are compared below
        layers.push_back({{"layer", ss(diff.index(r, PlanDiffModel::LayerColumn).data().toString())},
                          {"a", ss(diff.index(r, PlanDiffModel::AColumn).data().toString())},
                          {"b", ss(diff.index(r, PlanDiffModel::BColumn).data().toString())}});
    }
    const nlohmann::json ja = summary_json(ca), jb = summary_json(cb);
    nlohmann::json figures = nlohmann::json::object();
    for (const char* k : {"ppl", "kl_mean", "top1", "bytes", "passed", "decode_ms"})
        if (ja[k] != jb[k]) figures[k] = {ja[k], jb[k]};
    const auto *ma = ca.measurement(), *mb = cb.measurement();
    if (ma && mb) figures["board_tpot_p50_ms"] = {ma->tpotP50Ms, mb->tpotP50Ms};
    if (a.json) {
        print_json({{"a", a.a}, {"b", a.b}, {"layers", layers}, {"figures", figures}});
        return kOk;
    }
    std::printf("%s vs %s: %zu layer(s) differ\n", a.a.c_str(), a.b.c_str(), layers.size());
    for (const auto& l : layers)
        std::printf("  %-22s %-28s %s\n", l["layer"].get<std::string>().c_str(), l["a"].get<std::string>().c_str(),
                    l["b"].get<std::string>().c_str());
    for (auto it = figures.begin(); it != figures.end(); ++it)
        std::printf("  %-18s %s -> %s\n", it.key().c_str(), (*it)[0].dump().c_str(), (*it)[1].dump().c_str());
    return kOk;
}

int run_compile_config(const ConfigsArgs& a) {
    auto p = read_project(a.project);
    if (!p.ok()) return fail(p.error());
    auto i = find_config(*p, a.project, a.name);
    if (!i.ok()) return fail(i.error());
    auto m = open_model(ss(p->modelPath), ss(p->tokenizer));
    if (!m.ok()) return fail(m.error());
    const Configuration& c = p->configurations[*i];
    int matched = 0;
    const std::vector<edge::views::LayerSetting> settings =
        edge::views::settingsByName((*m)->layers, c.layers, c.settings, &matched);
    if (matched != int(c.layers.size()))
        return fail(err(a.project, ": configuration ", a.name, " names layers ", ss(p->modelPath), " does not have"));
    const QString out = a.out.empty() ? QFileInfo(qs(a.project)).absolutePath() +
                                            QStringLiteral("/%1-%2.edge").arg(c.name, qs(a.target))
                                      : QFileInfo(qs(a.out)).absoluteFilePath();
    const edge::views::ValidationSettings vs = edge::views::validatedSettings(c, {});
    ProgressBar bar(!a.json);
    auto artifact = edge::views::buildEngine(*m, settings, vs, qs(a.target), out, bar.progress());
    bar.finish();
    if (!artifact.ok()) return fail(artifact.error());
    ConfigurationModel list;
    list.setConfigurations(p->configurations);
    list.setEngine(int(*i), *artifact);
    p->configurations = list.configurations();
    if (auto s = write_project(a.project, *p); !s.ok()) return fail(s.error());
    if (a.json) {
        print_json({{"name", a.name},
                    {"target", a.target},
                    {"path", ss(artifact->path)},
                    {"sha256", ss(artifact->sha256)},
                    {"bytes", artifact->bytes}});
        return kOk;
    }
    std::printf("%s: %s for %s (%s, sha256 %s), recorded in %s\n", a.name.c_str(), ss(artifact->path).c_str(),
                a.target.c_str(), human_bytes(double(artifact->bytes)).c_str(), ss(artifact->sha256).c_str(),
                a.project.c_str());
    return kOk;
}

}  // namespace

Result<std::string> configuration_engine(const std::string& project, const std::string& name,
                                         const std::string& target) {
    auto p = read_project(project);
    if (!p.ok()) return p.error();
    auto i = find_config(*p, project, name);
    if (!i.ok()) return i.error();
    const auto* e = p->configurations[*i].engine(qs(target));
    if (!e)
        return err(project, ": configuration ", name, " has no ", target,
                   " engine: run `edgestudio-cli configs compile ", project, " ", name, " --target ", target,
                   "` first");
    return ss(e->path);
}

#ifdef EDGE_CLI_REMOTE
Result<std::vector<std::string>> record_profiles(const std::string& project, const std::vector<BoardProfile>& runs) {
    auto p = read_project(project);
    if (!p.ok()) return p.error();
    ConfigurationModel list;
    list.setConfigurations(p->configurations);
    std::vector<std::string> lines;
    for (const BoardProfile& r : runs) {
        auto o = edge::views::profileOutcome(*r.report, r.engine_sha256);
        o.workload = qs(r.workload);
        const int row = list.addMeasurement(edge::views::boardMeasurement(qs(r.board), o));
        lines.push_back(row < 0 ? r.board + ": its engine (sha256 " + r.engine_sha256 +
                                      ") was not compiled from a configuration of " + project + "; not recorded"
                                : r.board + ": recorded for " + ss(list.at(row).name));
    }
    p->configurations = list.configurations();
    EDGE_TRY(write_project(project, *p));
    return lines;
}
#endif

Result<NamedWorkload> project_workload(const std::string& project, const std::string& name) {
    auto p = read_project(project);
    if (!p.ok()) return p.error();
    std::string known;
    for (const auto& w : p->workloads) {
        if (ss(w.name) == name) {
            NamedWorkload out;
            for (const QString& t : w.prompts) out.prompts.push_back(ss(t));
            out.max_tokens = w.maxTokens;
            out.chat = w.chat;
            out.serve = ss(w.serveText);
            out.concurrency = w.concurrency;
            return out;
        }
        known += (known.empty() ? "" : ", ") + ss(w.name);
    }
    return err(name, ": no such workload file, and ", project, " has no workload of that name",
               known.empty() ? " (it has none)" : " (it has " + known + ")");
}

void add_configs_commands(CLI::App& app, int& rc) {
    auto a = std::make_shared<ConfigsArgs>();
    CLI::App* cfg = app.add_subcommand("configs", "The studio's configurations in a project file (*.edgeproj)");
    cfg->require_subcommand(1);
    CLI::App* add = cfg->add_subcommand("add", "Validate a plan into a new configuration of the project");
    add->add_option("project", a->project, "Project file (created with --model when missing)")->required();
    add->add_option("--plan", a->plan, "Plan file (*.plan.json)")->required();
    add->add_option("--model", a->model, "The model, for a new project");
    add->add_option("--tokenizer", a->tokenizer, "Tokenizer file when the model has none");
    add->add_option("--text", a->text, "Evaluation text (default: the project's)");
    add->add_option("--calib", a->calib,
                    "Calibration text for AWQ/GPTQ layers (default: the evaluation text's unscored paragraphs)");
    add->add_option("--calib-select", a->calib_select,
                    "Which calibration paragraphs: all (in order), kmeans (representatives of the model's "
                    "embeddings, as calib-select) or random")
        ->capture_default_str()
        ->check(CLI::IsMember({"all", "kmeans", "random"}));
    add->add_option("--calib-samples", a->calib_samples, "Paragraphs --calib-select kmeans|random chooses")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    add->add_option("--seed", a->seed, "Seed of the calibration selection")->capture_default_str();
    add->add_option("--calib-sequences", a->calib_sequences, "Calibration sequences")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    add->add_option("--calib-len", a->calib_len, "Tokens per calibration sequence")
        ->capture_default_str()
        ->check(CLI::Range(8, 8192));
    add->add_option("--parts", a->parts, "Stories scored")->capture_default_str()->check(CLI::PositiveNumber);
    add->add_option("--name", a->name, "Configuration name (default: the next C<n>)");
    add->add_flag("--json", a->json, "Print JSON");
    add->callback([a, &rc] { rc = run_add(*a); });
    CLI::App* list = cfg->add_subcommand("list", "List the configurations: quality, size, verdict, engines, boards");
    list->add_option("project", a->project, "Project file")->required();
    list->add_flag("--json", a->json, "Print JSON");
    list->callback([a, &rc] { rc = run_list(*a); });
    CLI::App* show = cfg->add_subcommand("show", "One configuration: figures, plan per layer, engines, measurements");
    show->add_option("project", a->project, "Project file")->required();
    show->add_option("name", a->name, "Configuration name")->required();
    show->add_flag("--json", a->json, "Print JSON");
    show->callback([a, &rc] { rc = run_show(*a); });
    CLI::App* diff = cfg->add_subcommand("diff", "What differs between two configurations: plan and figures");
    diff->add_option("project", a->project, "Project file")->required();
    diff->add_option("a", a->a, "First configuration")->required();
    diff->add_option("b", a->b, "Second configuration")->required();
    diff->add_flag("--json", a->json, "Print JSON");
    diff->callback([a, &rc] { rc = run_diff(*a); });
    CLI::App* comp = cfg->add_subcommand("compile", "Compile a configuration's engine and record it in the project");
    comp->add_option("project", a->project, "Project file")->required();
    comp->add_option("name", a->name, "Configuration name")->required();
    comp->add_option("--target", a->target, "cpu, cuda-sm87 or cuda-sm90")->capture_default_str();
    comp->add_option("--out", a->out, "Engine file (default: NAME-TARGET.edge beside the project)");
    comp->add_flag("--json", a->json, "Print JSON");
    comp->callback([a, &rc] { rc = run_compile_config(*a); });
}

}  // namespace edge::cli
