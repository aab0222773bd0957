// `generate` (sampling or greedy, streamed) and `tokenize`.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <optional>

#include "app/cli/common.h"
#include "engine/core/mapped_file.h"
#include "engine/runtime/cpu/llama_cpu.h"
#include "engine/runtime/one_sequence.h"
#include "engine/runtime/open_executor.h"
#include "engine/telemetry/stopwatch.h"
#include "engine/tokenizer/chat.h"

using edge::model::LlamaConfig;
using edge::runtime::LlamaCpu;
using edge::runtime::Numerics;
using edge::runtime::RuntimeOptions;
using edge::runtime::Sampler;
using edge::runtime::SamplingParams;
using edge::telemetry::Stopwatch;
using edge::tokenizer::GenerationDefaults;
using edge::tokenizer::Tokenizer;
using edge::tokenizer::TokenizerSpec;

namespace edge::cli {

namespace {

struct GenerateArgs {
    std::string model, tokenizer, prompt;
    // Chat: the prompt (and --system) as messages of a conversation, or a whole conversation
    // from a JSON file, rendered with the model's chat template.
    bool chat = false;
    std::string system, messages;
    int max_tokens = 64;
    float temperature = 0.8f;
    float top_p = 0.95f;
    int top_k = 0;
    bool temperature_given = false, top_p_given = false, top_k_given = false;
    uint64_t seed = 42;
    int threads = 0;
    std::string backend = "auto";
    NumericsArgs numerics;
    bool json = false;
};

int run_generate(const GenerateArgs& a) {
    // A compiled engine is opened again by its executor below: here its tokenizer and shape only.
    const bool compiled = runtime::is_compiled_engine(a.model);
    // Other files: weights as stored for the FP32 executor, as F32 for llama.cpp's numerics (which
    // re-quantize from F32 with the source types).
    auto loaded = load(a.model, a.tokenizer, true,
                       compiled                ? Weights::Lazy
                       : a.numerics.llamacpp() ? Weights::F32
                                               : Weights::AsStored);
    if (!loaded.ok()) return fail(loaded.error());
    const Tokenizer& tok = *loaded->tokenizer;
    const LlamaConfig& c = loaded->model->config;
    if (tok.vocab_size() > c.vocab_size)
        return fail(a.model + ": the tokenizer has " + std::to_string(tok.vocab_size()) +
                    " tokens but the model only " + std::to_string(c.vocab_size));

    // The prompt: plain text, or a conversation in the model's chat template.
    std::vector<int32_t> prompt;
    std::string chat_text;
    const bool chat = a.chat || !a.messages.empty();
    if (chat) {
        std::vector<tokenizer::ChatMessage> messages;
        if (!a.messages.empty()) {
            auto text = read_text_file(a.messages);
            if (!text.ok()) return fail(text.error());
            auto parsed = tokenizer::parse_chat_messages(*text, a.messages);
            if (!parsed.ok()) return fail(parsed.error());
            messages = std::move(parsed).value();
        }
        if (!a.system.empty()) messages.insert(messages.begin(), tokenizer::ChatMessage{"system", a.system});
        if (!a.prompt.empty()) messages.push_back(tokenizer::ChatMessage{"user", a.prompt});
        if (messages.empty()) return fail("--chat needs a --prompt, a --system text or a --messages file");
        auto rendered = tokenizer::render_chat_prompt(loaded->model->tokenizer, tok, messages, true);
        if (!rendered.ok()) return fail(rendered.error());
        chat_text = std::move(rendered->text);
        prompt = std::move(rendered->ids);
    } else {
        prompt = tok.encode(a.prompt, loaded->model->tokenizer.add_bos);
    }
    if (prompt.empty()) {
        if (tok.bos_id() < 0) return fail("the prompt is empty and the tokenizer has no BOS token to start from");
        prompt.push_back(tok.bos_id());
    }
    RuntimeOptions ro;
    ro.threads = a.threads;
    if (auto st = a.numerics.apply(ro); !st.ok()) return fail(st.error());
    ro.max_seq = std::min(c.context_length > 0 ? c.context_length : 4096, int(prompt.size()) + a.max_tokens);
    ro.max_seq = std::max(ro.max_seq, int(prompt.size()));
    if (int(prompt.size()) > ro.max_seq || (c.context_length > 0 && int(prompt.size()) > c.context_length))
        return fail("the prompt has " + std::to_string(prompt.size()) + " tokens, more than the model context of " +
                    std::to_string(c.context_length));
    // What runs it: a compiled engine's program on its backend (CUDA when a device answers, as
    // on the board), any other model on the CPU executor over its weights. Both through the one
    // executor interface, the prompt and every token as batch steps of one PagedKv sequence; the
    // llama.cpp numerics mode has no batch step and keeps its own F16 cache (prefill/forward).
    std::unique_ptr<runtime::Executor> exe;
    std::unique_ptr<LlamaCpu> compat;
    std::string runs_on;
    if (compiled) {
        if (ro.numerics != Numerics::Fp32)
            return fail(a.model + ": --numerics llamacpp runs GGUF files as they store them, not compiled engines");
        auto choice = runtime::parse_backend_choice(a.backend);
        if (!choice.ok()) return fail(choice.error());
        auto opened = runtime::open_executor(a.model, runtime::OpenOptions{a.threads, ro.max_seq, *choice, {}});
        if (!opened.ok()) return fail(opened.error());
        runs_on = opened->label;
        exe = std::move(opened->exe);
        loaded->model = opened->model;  // the executor's own copy; the first one is released
    } else {
        auto rt = LlamaCpu::create(loaded->model, ro);
        if (!rt.ok()) return fail(rt.error());
        runs_on = (*rt)->capabilities().name;
        if (ro.numerics == Numerics::Fp32)
            exe = std::move(rt).value();
        else
            compat = std::move(rt).value();
    }
    const int max_seq = exe ? exe->capabilities().max_seq : compat->max_seq();
    std::optional<runtime::OneSequence> seq;
    if (exe) {
        auto one = runtime::OneSequence::create(*exe, max_seq);
        if (!one.ok()) return fail(one.error());
        seq.emplace(std::move(one).value());
    }
    // The next tokens of the one sequence at position pos; logits of the last.
    auto run = [&](std::span<const int32_t> t, int pos) -> Result<const float*> {
        if (!exe) return t.size() == 1 ? compat->forward(t[0], pos) : compat->prefill(t.data(), int(t.size()), pos);
        return seq->next(t);
    };

    // Sampling: the flags given, else the model's own defaults (generation_config.json), else ours.
    const GenerationDefaults& gd = loaded->model->tokenizer.generation;
    SamplingParams sp;
    sp.temperature = !a.temperature_given && gd.temperature >= 0 ? gd.temperature : a.temperature;
    sp.top_p = !a.top_p_given && gd.top_p >= 0 ? gd.top_p : a.top_p;
    sp.top_k = !a.top_k_given && gd.top_k >= 0 ? gd.top_k : a.top_k;
    sp.seed = a.seed;
    const TokenizerSpec& spec = loaded->model->tokenizer;
    Sampler sampler(sp);

    Stopwatch sw;
    auto first = run(prompt, 0);
    if (!first.ok()) return fail(first.error());
    const float* logits = first.value();
    const double prefill_s = sw.seconds();
    sw.restart();
    if (!a.json && !chat) {  // a chat prints the reply only
        std::fputs(a.prompt.c_str(), stdout);
        std::fflush(stdout);
    }
    std::vector<int32_t> out;
    std::string text;
    int32_t prev = prompt.back();
    int pos = int(prompt.size());
    while (int(out.size()) < a.max_tokens) {
        const int32_t next = sampler.sample(logits, c.vocab_size);
        if (next == tok.eos_id() || spec.ends_generation(next)) break;  // any EOS the model names
        out.push_back(next);
        const std::string piece = tok.piece(next, prev);
        text += piece;
        if (!a.json) {
            std::fwrite(piece.data(), 1, piece.size(), stdout);
            std::fflush(stdout);
        }
        prev = next;
        if (pos >= max_seq || int(out.size()) >= a.max_tokens) break;
        auto step = run(std::span(&next, 1), pos++);
        if (!step.ok()) return fail(step.error());
        logits = step.value();
    }
    const double decode_s = sw.seconds();
    if (a.json) {
        nlohmann::json j;
        j["prompt"] = a.prompt;
        if (chat) j["chat_prompt"] = chat_text;
        j["prompt_ids"] = prompt;
        j["ids"] = out;
        j["text"] = text;
        j["prefill_seconds"] = prefill_s;
        j["executor"] = runs_on;
        j["sampling"] = {{"temperature", sp.temperature}, {"top_p", sp.top_p}, {"top_k", sp.top_k}};
        j["decode_seconds"] = decode_s;
        j["decode_tokens_per_second"] = decode_s > 0 ? double(out.size()) / decode_s : 0.0;
        print_json(j);
    } else {
        std::fputc('\n', stdout);
        std::fprintf(stderr, "%zu tokens, %.1f tokens/s on %s\n", out.size(),
                     decode_s > 0 ? double(out.size()) / decode_s : 0.0, runs_on.c_str());
    }
    return kOk;
}

struct TokenizeArgs {
    std::string model, tokenizer, text;
    bool no_bos = false;
    bool json = false;
};

int run_tokenize(const TokenizeArgs& a) {
    auto loaded = load(a.model, a.tokenizer, true, Weights::Lazy);
    if (!loaded.ok()) return fail(loaded.error());
    const Tokenizer& tok = *loaded->tokenizer;
    const bool bos = !a.no_bos && loaded->model->tokenizer.add_bos;
    const std::vector<int32_t> ids = tok.encode(a.text, bos);
    if (a.json) {
        nlohmann::json pieces = nlohmann::json::array();
        for (int32_t id : ids) pieces.push_back(tok.token_text(id));
        nlohmann::json j;
        j["ids"] = ids;
        j["pieces"] = pieces;
        j["count"] = ids.size();
        print_json(j);
        return kOk;
    }
    std::string line;
    for (size_t i = 0; i < ids.size(); ++i) line += (i ? " " : "") + std::to_string(ids[i]);
    std::printf("%s\n", line.c_str());
    return kOk;
}

}  // namespace

void add_text_commands(CLI::App& app, int& rc) {
    auto g = std::make_shared<GenerateArgs>();
    CLI::App* gen = app.add_subcommand("generate", "Generate text from a prompt (streamed)");
    gen->add_option("model", g->model, "Model file or folder")->required();
    gen->add_option("--prompt,-p", g->prompt, "Prompt text (with --chat: the user's message)");
    gen->add_flag("--chat", g->chat, "Render the prompt as a user message with the model's chat template");
    gen->add_option("--system", g->system, "With --chat: a system message before the prompt");
    gen->add_option("--messages", g->messages,
                    "A conversation as JSON ([{\"role\": ..., \"content\": ...}]) rendered with the model's chat "
                    "template; --prompt adds a last user message")
        ->check(CLI::ExistingFile);
    gen->add_option("--max-tokens,-n", g->max_tokens, "Tokens to generate")->check(CLI::Range(1, 1 << 20));
    gen->add_option("--temperature", g->temperature, "Sampling temperature; 0 = greedy argmax")
        ->check(CLI::Range(0.0f, 100.0f));
    gen->add_option("--top-p", g->top_p, "Nucleus sampling mass (1 = off)")->check(CLI::Range(0.0f, 1.0f));
    gen->add_option("--top-k", g->top_k, "Keep the k most likely tokens (0 = off)")->check(CLI::NonNegativeNumber);
    g->numerics.add_options(gen);
    gen->add_option("--seed", g->seed, "Sampling seed");
    gen->add_option("--threads,-t", g->threads, "Threads (0 = all)")->check(CLI::NonNegativeNumber);
    gen->add_option("--backend", g->backend,
                    "What runs a compiled engine (.edge): auto (CUDA when a device answers, else the CPU), cpu or "
                    "cuda; other formats run on the CPU")
        ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
    gen->add_option("--tokenizer", g->tokenizer, "Tokenizer file for formats without one (llama2.c)");
    gen->add_flag("--json", g->json, "Print prompt ids, generated ids and text as JSON");
    gen->callback([g, gen, &rc] {
        g->temperature_given = gen->count("--temperature") > 0;
        g->top_p_given = gen->count("--top-p") > 0;
        g->top_k_given = gen->count("--top-k") > 0;
        rc = run_generate(*g);
    });

    auto t = std::make_shared<TokenizeArgs>();
    CLI::App* tk = app.add_subcommand("tokenize", "Token ids of a text");
    tk->add_option("model", t->model, "Model file or folder")->required();
    tk->add_option("--text", t->text, "Text to encode")->required();
    tk->add_option("--tokenizer", t->tokenizer, "Tokenizer file for formats without one (llama2.c)");
    tk->add_flag("--no-bos", t->no_bos, "Do not prepend BOS");
    tk->add_flag("--json", t->json, "Print ids and pieces as JSON");
    tk->callback([t, &rc] { rc = run_tokenize(*t); });
}

}  // namespace edge::cli
