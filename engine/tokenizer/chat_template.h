// Hugging Face chat templates: a self-contained Jinja2 renderer with the semantics of jinja2 3.1 as
// transformers configures it (ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks, loop
// controls, HF's tojson, raise_exception). Parsing and rendering report problems as Result errors
// that name the template's origin and line:column; hostile templates hit bounded limits (nesting
// depth, output size, loop iterations, total work) instead of crashing or hanging.
#pragma once
#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "engine/core/result.h"

namespace edge::tokenizer {

namespace jinja {
struct Program;  // the parsed template (chat_template_impl.h)
}

// Optional hooks for a render. strftime_now, when set, becomes the template global
// strftime_now(format); when unset the name is undefined (`strftime_now is defined` is false).
struct RenderHooks {
    std::function<std::string(const std::string& format)> strftime_now;
};

class ChatTemplate {
public:
    // Parses once; errors name origin:line:col.
    static Result<ChatTemplate> parse(std::string_view text, std::string origin);
    // Renders with a context object: {"messages": [...], "add_generation_prompt": bool,
    // "bos_token": "...", "eos_token": "...", optionally "tools", "date_string", ...}.
    // Each top-level key becomes a template variable. Errors name origin:line:col.
    Result<std::string> render(const nlohmann::ordered_json& context) const;
    Result<std::string> render(const nlohmann::ordered_json& context, const RenderHooks& hooks) const;
    const std::string& origin() const;

private:
    explicit ChatTemplate(std::shared_ptr<const jinja::Program> program) : program_(std::move(program)) {}
    std::shared_ptr<const jinja::Program> program_;  // immutable after parse; shared by copies
};

}  // namespace edge::tokenizer
