// ChatTemplate: parse once, render many times. Internal failures (thrown as jinja::Fail inside
// the renderer) become Result errors here, prefixed with origin:line:col.
#include "engine/tokenizer/chat_template.h"

#include <exception>
#include <new>

#include "engine/tokenizer/chat_template_impl.h"

namespace edge::tokenizer {

namespace {

Error to_error(const std::string& origin, const jinja::Fail& f) {
    if (!f.has_pos) return err(origin, ": ", f.msg);
    return err(origin, ":", f.pos.line, ":", f.pos.col, ": ", f.msg);
}

}  // namespace

Result<ChatTemplate> ChatTemplate::parse(std::string_view text, std::string origin) {
    auto program = std::make_shared<jinja::Program>();
    program->origin = std::move(origin);
    try {
        jinja::parse_program(text, *program);
    } catch (const jinja::Fail& f) {
        return to_error(program->origin, f);
    } catch (const std::bad_alloc&) {
        return err(program->origin, ": out of memory while parsing the chat template");
    } catch (const std::exception& e) {
        return err(program->origin, ": cannot parse the chat template: ", e.what());
    }
    return ChatTemplate(std::move(program));
}

Result<std::string> ChatTemplate::render(const nlohmann::ordered_json& context) const {
    return render(context, RenderHooks{});
}

Result<std::string> ChatTemplate::render(const nlohmann::ordered_json& context, const RenderHooks& hooks) const {
    try {
        return jinja::render_program(*program_, context, hooks);
    } catch (const jinja::Fail& f) {
        return to_error(program_->origin, f);
    } catch (const std::bad_alloc&) {
        return err(program_->origin, ": out of memory while rendering the chat template");
    } catch (const std::exception& e) {
        return err(program_->origin, ": cannot render the chat template: ", e.what());
    }
}

const std::string& ChatTemplate::origin() const { return program_->origin; }

}  // namespace edge::tokenizer
