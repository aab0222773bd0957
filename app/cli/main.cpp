// edgestudio-cli: the studio's headless twin. Subcommands: info, generate, tokenize, perplexity,
// bench, synth; each takes --json for tooling.
// Exit codes: 0 success, 1 failure (message on stderr naming the file and the problem),
// 2 usage error. No exception escapes main.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <new>
#include <string>

#include "app/cli/common.h"
#include "engine/core/memory_budget.h"

namespace edge::cli {
void add_prune_commands(CLI::App& app, int& rc);    // cmd_prune.cpp: prune, prune-bench
void add_configs_commands(CLI::App& app, int& rc);  // cmd_configs.cpp: configs add|list|show|diff|compile
}  // namespace edge::cli

int main(int argc, char** argv) {
    using namespace edge::cli;
    try {
        CLI::App app{"EdgeStudio command line: inspect, run, evaluate and benchmark models", "edgestudio-cli"};
        app.require_subcommand(1);
        // Options of the top level (--memory-limit) may also follow the subcommand.
        app.fallthrough(true);
        int rc = kOk;
        std::string memory_limit;
        app.add_option("--memory-limit", memory_limit,
                       "Memory a command may plan to use (e.g. 6G, 512M); default: what the machine has "
                       "available (MemAvailable, or the cgroup's limit). A command whose estimate exceeds it "
                       "stops before allocating")
            ->each([](const std::string& v) {
                auto b = edge::parse_memory_size(v);
                if (!b.ok()) throw CLI::ValidationError("--memory-limit", b.message());
                edge::set_memory_limit(*b);
            });
        add_info_command(app, rc);
        add_text_commands(app, rc);
        add_perplexity_command(app, rc);
        add_bench_command(app, rc);
        add_synth_command(app, rc);
        add_compile_command(app, rc);
        add_quant_commands(app, rc);
        add_export_command(app, rc);
        add_cnn_commands(app, rc);
        add_kv_commands(app, rc);
        add_prune_commands(app, rc);  // prune, prune-bench
        add_calib_commands(app, rc);
#ifdef EDGE_CLI_ANALYSIS
        add_analysis_commands(app, rc);
#endif
#ifdef EDGE_CLI_REMOTE
        add_remote_commands(app, rc);
#endif
#ifdef EDGE_CLI_CONFIGS
        add_configs_commands(app, rc);
#endif
        // An unknown first word is a usage error that names it (CLI11 would only say that a
        // subcommand is required).
        if (argc > 1 && argv[1][0] != '-') {
            std::string known;
            bool found = false;
            for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
                found = found || sub->check_name(argv[1]);  // its name or an alias
                known += (known.empty() ? "" : ", ") + sub->get_name();
            }
            if (!found) {
                std::fprintf(stderr, "edgestudio-cli: unknown subcommand '%s' (known: %s)\n", argv[1], known.c_str());
                return kUsage;
            }
        }
        try {
            app.parse(argc, argv);
        } catch (const CLI::CallForHelp& e) {
            return app.exit(e);
        } catch (const CLI::CallForAllHelp& e) {
            return app.exit(e);
        } catch (const CLI::CallForVersion& e) {
            return app.exit(e);
        } catch (const CLI::ParseError& e) {
            std::fprintf(stderr, "edgestudio-cli: %s\nRun 'edgestudio-cli --help' for usage.\n", e.what());
            return kUsage;
        }
        return rc;
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "edgestudio-cli: out of memory\n");
        return kFailed;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "edgestudio-cli: internal error: %s\n", e.what());
        return kFailed;
    } catch (...) {
        std::fprintf(stderr, "edgestudio-cli: internal error\n");
        return kFailed;
    }
}
