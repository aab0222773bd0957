// Chat templates (engine/tokenizer/chat_template.h): every fixture in tests/data/chat rendered with
// every conversation must match jinja2 (the oracle script, run as transformers configures it) byte
// for byte; plus unit tests of the language, the filters, undefined values, and the errors and
// limits hostile templates hit.
#include "engine/tokenizer/chat_template.h"

#include <nlohmann/json.hpp>

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "test_support.h"

namespace edge::tokenizer {
namespace {

using ojson = nlohmann::ordered_json;
namespace fs = std::filesystem;

const char* kPython = "/usr/bin/python3";

std::string oracle_script() {
    return std::string(EDGE_SOURCE_DIR) + "/tests/engine/tokenizer/reference/render_jinja.py";
}
std::string chat_dir() { return std::string(EDGE_SOURCE_DIR) + "/tests/data/chat"; }

std::string read_file(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

struct CommandResult {
    int status = -1;
    std::string out;
};
CommandResult run_command(const std::string& cmd) {
    CommandResult r;
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return r;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    int st = pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}

Result<std::string> render(std::string_view tpl, const ojson& ctx = ojson::object(), const char* origin = "t.jinja") {
    auto t = ChatTemplate::parse(tpl, origin);
    if (!t.ok()) return t.error();
    return t->render(ctx);
}
std::string out(std::string_view tpl, const ojson& ctx = ojson::object()) {
    auto r = render(tpl, ctx);
    EXPECT_TRUE(r.ok()) << tpl << " -> " << r.message();
    return r.ok() ? r.value() : std::string("<error: ") + r.message() + ">";
}

// ---- the oracle comparison ----

TEST(ChatTemplateOracle, FixturesMatchJinja2ByteForByte) {
    ASSERT_TRUE(fs::exists(oracle_script())) << "missing " << oracle_script();
    const ojson convs = ojson::parse(read_file(chat_dir() + "/conversations.json"));
    std::vector<fs::path> fixtures;
    for (const auto& e : fs::directory_iterator(chat_dir()))
        if (e.path().extension() == ".jinja") fixtures.push_back(e.path());
    std::sort(fixtures.begin(), fixtures.end());
    ASSERT_GE(fixtures.size(), 8u);
    ASSERT_GE(convs.size(), 5u);
    // Every fixture with every conversation, with and without the generation prompt: all the cases
    // go to the oracle in one batch (one python start), then each is compared with our rendering.
    struct Case {
        size_t fixture;
        std::string label;
        ojson ctx;
    };
    std::vector<ChatTemplate> templates;
    std::vector<Case> cases;
    ojson jobs = ojson::array();
    for (size_t fi = 0; fi < fixtures.size(); ++fi) {
        const fs::path& f = fixtures[fi];
        auto tpl = ChatTemplate::parse(read_file(f), f.filename().string());
        ASSERT_TRUE(tpl.ok()) << tpl.message();
        templates.push_back(tpl.value());
        for (auto it = convs.begin(); it != convs.end(); ++it) {
            for (bool agp : {true, false}) {
                ojson ctx = it.value();
                ctx["add_generation_prompt"] = agp;
                ctx["bos_token"] = "<s>";
                ctx["eos_token"] = "</s>";
                jobs.push_back({{"template_path", f.string()}, {"context", ctx}});
                cases.push_back({fi, f.filename().string() + " x " + it.key() + (agp ? " +gen" : ""), std::move(ctx)});
            }
        }
    }
    const fs::path tmp = edge::test::temp_dir("chat_template");
    const fs::path jobs_file = tmp / "jobs.json", out_file = tmp / "oracle.json", err_file = tmp / "stderr.txt";
    std::ofstream(jobs_file, std::ios::binary) << jobs.dump();
    CommandResult ref = run_command(std::string(kPython) + " '" + oracle_script() + "' --batch '" + jobs_file.string() +
                                    "' '" + out_file.string() + "' 2>'" + err_file.string() + "'");
    ASSERT_EQ(ref.status, 0) << kPython << " with jinja2 is required for the chat-template oracle, which did not run: "
                             << read_file(err_file);
    const ojson results = ojson::parse(read_file(out_file));
    ASSERT_TRUE(results.is_array());
    ASSERT_EQ(results.size(), cases.size());
    int raised = 0;
    for (size_t k = 0; k < cases.size(); ++k) {
        const Case& c = cases[k];
        const ojson& ref_result = results[k];
        auto ours = templates[c.fixture].render(c.ctx);
        if (ref_result.at("ok").get<bool>()) {
            EXPECT_TRUE(ours.ok()) << c.label << ": " << ours.message();
            if (ours.ok()) {
                EXPECT_EQ(ours.value(), ref_result.at("text").get<std::string>()) << c.label;
            }
            continue;
        }
        const std::string why = ref_result.at("error").get<std::string>();
        EXPECT_FALSE(ours.ok()) << c.label << ": jinja2 failed (" << why << ") but we rendered";
        if (ours.ok()) continue;
        EXPECT_NE(ours.message().find(fixtures[c.fixture].filename().string() + ":"), std::string::npos)
            << ours.message();
        const std::string kRaised = "TemplateError: ";
        if (why.rfind(kRaised, 0) == 0) {
            ++raised;
            std::string text = why.substr(kRaised.size());
            while (!text.empty() && text.back() == '\n') text.pop_back();
            EXPECT_TRUE(edge::test::fails_with(ours, {"the template raised: " + text})) << c.label;
        }
    }
    EXPECT_GE(cases.size(), 100u);
    EXPECT_GE(raised, 4);  // the role-alternation checks fire for some conversations
}

// ---- literals, printing, arithmetic ----

TEST(ChatTemplate, PrintsValuesAsPythonStr) {
    EXPECT_EQ(out("{{ none }}|{{ None }}|{{ true }}|{{ False }}|{{ 1.0 }}|{{ 0.5 }}|{{ 1e-5 }}|{{ 1e16 }}|{{ 42 }}"),
              "None|None|True|False|1.0|0.5|1e-05|1e+16|42");
    EXPECT_EQ(out("{{ ['a', 1, none, true, 2.5] }}|{{ {'k': 'v', 'n': [1]} }}|{{ (1,) }}|{{ (1, 'x') }}"),
              "['a', 1, None, True, 2.5]|{'k': 'v', 'n': [1]}|(1,)|(1, 'x')");
    EXPECT_EQ(out("{{ [\"it's\", 'a\"b', 'back\\\\slash\\n'] }}"), "[\"it's\", 'a\"b', 'back\\\\slash\\n']");
    EXPECT_EQ(out("{{ 'a' 'b' \"c\" }}|{{ '\\u00e9\\x41\\t' }}"),
              "abc|\xC3\xA9"
              "A\t");
    EXPECT_EQ(out("{{ 1, 2 }}"), "(1, 2)");
}

TEST(ChatTemplate, ArithmeticFollowsPython) {
    EXPECT_EQ(out("{{ 7 / 2 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 7.5 // 2 }} {{ 2 ** 10 }} {{ 2 ** -1 }}"),
              "3.5 3 -4 2 3.0 1024 0.5");
    EXPECT_EQ(out("{{ 0.1 + 0.2 }} {{ 1 + 2.0 }} {{ 'ab' * 3 }} {{ [1] + [2] }} {{ 'a' ~ 1 ~ none }} {{ -2 ** 2 }}"),
              "0.30000000000000004 3.0 ababab [1, 2] a1None 4");
    EXPECT_EQ(out("{{ 1 < 2 < 3 }} {{ 'b' > 'a' }} {{ 'ell' in 'hello' }} {{ 2 not in [1, 3] }} {{ 'k' in {'k': 1} }}"),
              "True True True True True");
    EXPECT_EQ(out("{{ 1 == 1.0 }} {{ [1, 2] == (1, 2) }} {{ true + 1 }} {{ 'x' if 0 else 'y' }}|{{ 'x' if false }}|"),
              "True False 2 y||");
    EXPECT_EQ(out("{{ [] or 'empty' }} {{ 'a' and 'b' }} {{ not '' }} {{ '%s-%d' % ('a', 3) }}"), "empty b True a-3");
    EXPECT_TRUE(edge::test::fails_with(render("{{ 1 / 0 }}"), {"t.jinja:1:6", "division by zero"}));
    EXPECT_TRUE(edge::test::fails_with(render("{{ 1 + 'a' }}"), {"t.jinja:1:6", "unsupported operand"}));
    EXPECT_TRUE(edge::test::fails_with(render("{{ 9223372036854775807 + 1 }}"), {"t.jinja:1:", "integer overflow"}));
}

TEST(ChatTemplate, SlicesAndIndexing) {
    const ojson ctx = {{"m", {1, 2, 3, 4}}, {"s", "h\xC3\xA9llo"}};
    EXPECT_EQ(out("{{ m[1:] }} {{ m[:-1] }} {{ m[::-1] }} {{ m[::2] }} {{ m[-1] }} {{ m[10] }}|", ctx),
              "[2, 3, 4] [1, 2, 3] [4, 3, 2, 1] [1, 3] 4 |");
    EXPECT_EQ(out("{{ s[1] }} {{ s[-1] }} {{ s[1:3] }} {{ s[::-1] }} {{ s | length }}", ctx),
              "\xC3\xA9 o \xC3\xA9l oll\xC3\xA9h 5");
}

// ---- statements ----

TEST(ChatTemplate, LoopVariables) {
    EXPECT_EQ(out("{% for x in 'abc' %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}"
                  "{{ loop.first|int }}{{ loop.last|int }}{{ loop.length }} {% endfor %}"),
              "1032103 2121003 3210013 ");
    EXPECT_EQ(out("{% for x in [1, 2, 3] %}{{ loop.previtem }}<{{ x }}>{{ loop.nextitem }}{{ loop.cycle('a', 'b') }};"
                  "{% endfor %}"),
              "<1>2a;1<2>3b;2<3>a;");
    EXPECT_EQ(out("{% for x in range(10) if x is even %}{{ x }}{{ ',' if not loop.last }}{% else %}none{% endfor %}"),
              "0,2,4,6,8");
    EXPECT_EQ(out("{% for x in [] %}x{% else %}none{% endfor %}"), "none");
    EXPECT_EQ(out("{% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}={{ v }} {% endfor %}"), "a=1 b=2 ");
    EXPECT_EQ(out("{% for x in range(6) %}{% if x == 1 %}{% continue %}{% endif %}{% if x == 4 %}{% break %}{% endif %}"
                  "{{ x }}{% endfor %}"),
              "023");
    // Loop bodies are scopes: a `set` inside does not leak, a namespace does.
    EXPECT_EQ(out("{% set a = 0 %}{% set ns = namespace(a=0) %}{% for x in [1, 2] %}{% set a = a + x %}"
                  "{% set ns.a = ns.a + x %}{% endfor %}{{ a }} {{ ns.a }}"),
              "0 3");
}

TEST(ChatTemplate, SetMacroAndBlocks) {
    EXPECT_EQ(out("{% set a, b = 1, 'x' %}{{ a }}{{ b }}{% set c %}[{{ a }}]{% endset %}{{ c }}{{ c | length }}"),
              "1x[1]3");
    EXPECT_EQ(out("{% macro m(x, y='d', z=none) %}{{ x }}-{{ y }}-{{ z }}{% endmacro %}{{ m(1) }}|{{ m(1, 2) }}|"
                  "{{ m(x=3, z=4) }}"),
              "1-d-None|1-2-None|3-d-4");
    EXPECT_EQ(out("{% macro rec(n) %}{{ n }}{% if n > 0 %}{{ rec(n - 1) }}{% endif %}{% endmacro %}{{ rec(3) }}"),
              "3210");
    EXPECT_EQ(out("{% filter upper %}abc{{ 'd' }}{% endfilter %}{% with v = 5 %}{{ v }}{% endwith %}{{ v }}"), "ABCD5");
    EXPECT_EQ(out("{% generation %}gen{% endgeneration %}{% raw %}{{ x }}{% endraw %}"), "gen{{ x }}");
    EXPECT_EQ(out("{% if false %}a{% elif 0 %}b{% elif 'x' %}c{% else %}d{% endif %}"), "c");
}

// ---- whitespace control (trim_blocks, lstrip_blocks, - and +) ----

TEST(ChatTemplate, WhitespaceControl) {
    EXPECT_EQ(out("{% if true %}\nA\n{% endif %}\nB"), "A\nB");       // trim_blocks
    EXPECT_EQ(out("x\n    {% if true %}A{% endif %}"), "x\nA");       // lstrip_blocks
    EXPECT_EQ(out("x\n    {%+ if true %}A{% endif %}"), "x\n    A");  // + keeps spaces
    EXPECT_EQ(out("x\n    {{ 'A' }}"), "x\n    A");                   // not for {{
    EXPECT_EQ(out("a  \n {%- if true -%}  \n b {%- endif %}"), "ab");
    EXPECT_EQ(out("a {{- 'b' -}} \n c"), "abc");
    EXPECT_EQ(out("a\n  {# note #}\nb"), "a\nb");
    EXPECT_EQ(out("a {#- note -#} b"), "ab");
    EXPECT_EQ(out("{% if true +%}\nA{% endif %}"), "\nA");  // +%} keeps the newline
    EXPECT_EQ(out("line\r\nnext\r\n"), "line\nnext");       // newlines normalized, last dropped
    EXPECT_EQ(out("{{ 'a' }}\n"), "a");
    EXPECT_EQ(out("{{ 'a' }}\n\n"), "a\n");
}

// ---- filters ----

TEST(ChatTemplate, StringFilters) {
    EXPECT_EQ(out("{{ '  a b  ' | trim }}|{{ 'xxaxx' | trim('x') }}|{{ 'aBc' | upper }}|{{ 'aBc' | lower }}"),
              "a b|a|ABC|abc");
    EXPECT_EQ(
        out("{{ 'hello wORLD-foo(bar' | title }}|{{ 'hELLO world' | capitalize }}|{{ 'a-b-a' | replace('a', 'x') }}"),
        "Hello World-Foo(Bar|Hello world|x-b-x");
    EXPECT_EQ(
        out("{{ 'a\\nb\\n\\nc' | indent(2) }}|{{ 'a\\nb' | indent(2, true) }}|{{ 'one two  three' | wordcount }}"),
        "a\n  b\n\n  c|  a\n  b|3");
    EXPECT_EQ(out("{{ 42 | string }}|{{ '<a&b>' | e }}|{{ 'x' | safe }}|{{ 'abc' | reverse }}|{{ 'abc' | length }}"),
              "42|&lt;a&amp;b&gt;|x|cba|3");
}

TEST(ChatTemplate, ListFilters) {
    const ojson ctx = {{"msgs",
                        {{{"role", "user"}, {"content", "a"}},
                         {{"role", "assistant"}, {"content", "b"}},
                         {{"role", "user"}, {"content", "c"}}}}};
    EXPECT_EQ(out("{{ msgs | selectattr('role', 'equalto', 'user') | map(attribute='content') | join(', ') }}", ctx),
              "a, c");
    EXPECT_EQ(
        out("{{ msgs | rejectattr('role', 'eq', 'user') | list | length }} {{ msgs | map(attribute='role') | unique "
            "| list }}",
            ctx),
        "1 ['user', 'assistant']");
    EXPECT_EQ(
        out("{{ msgs | first | attr('role') }} {{ (msgs | last).content }} {{ msgs | join(',', attribute='role') }}",
            ctx),
        "user c user,assistant,user");
    EXPECT_EQ(out("{{ [3, 1, 2] | sort }} {{ ['b', 'A', 'a'] | sort }} {{ [1, 2] | sort(reverse=true) }} "
                  "{{ [1, 2, 3, 4] | select('odd') | list }} {{ [1, 2, 3] | reject('gt', 1) | list }}"),
              "[1, 2, 3] ['A', 'a', 'b'] [2, 1] [1, 3] [1]");
    EXPECT_EQ(
        out("{{ ['a', 'b'] | map('upper') | list }} {{ [1, 2, 3] | sum }} {{ [2, 5, 1] | max }} {{ [2, 5] | min }} "
            "{{ [1, 2] | reverse | list }} {{ 'ab' | list }} {{ [] | first }}|"),
        "['A', 'B'] 6 5 2 [2, 1] ['a', 'b'] |");
    EXPECT_EQ(out("{{ {'b': 1, 'a': 2} | items | list }} {{ {'b': 1, 'a': 2} | dictsort }} {{ [1, 2] | count }}"),
              "[('b', 1), ('a', 2)] [('a', 2), ('b', 1)] 2");
}

TEST(ChatTemplate, ValueFilters) {
    EXPECT_EQ(out("{{ x | default('d') }} {{ none | default('d') }} {{ '' | default('d', true) }} {{ 0 | d('z', "
                  "boolean=true) }}"),
              "d None d z");
    EXPECT_EQ(
        out("{{ '42' | int }} {{ '4.7' | int }} {{ 'x' | int }} {{ 'x' | int(7) }} {{ 3.9 | int }} {{ '2.5' | float }} "
            "{{ 2 | float }}"),
        "42 4 0 7 3 2.5 2.0");
    EXPECT_EQ(
        out("{{ 2.5 | round }} {{ 3 | round }} {{ 2.675 | round(2) }} {{ 2.1 | round(0, 'ceil') }} {{ -3 | abs }}"),
        "2.0 3 2.67 3.0 3");
}

TEST(ChatTemplate, ToJsonIsHuggingFaceFlavoured) {
    const ojson ctx = ojson::parse(R"({"t": {"name": "f", "args": {"b": [1, 2.5, null, true], "a": "<é>"}, "e": {}}})");
    EXPECT_EQ(out("{{ t | tojson }}", ctx),
              R"({"name": "f", "args": {"b": [1, 2.5, null, true], "a": "<é>"}, "e": {}})");
    EXPECT_EQ(out("{{ t.args | tojson(indent=2) }}", ctx),
              "{\n  \"b\": [\n    1,\n    2.5,\n    null,\n    true\n  ],\n  \"a\": \"<\xC3\xA9>\"\n}");
    EXPECT_EQ(out("{{ t.args | tojson(sort_keys=true, separators=(',', ':')) }}", ctx),
              R"({"a":"<é>","b":[1,2.5,null,true]})");
    EXPECT_EQ(out("{{ 'q\"\\\\\\n\\u0001' | tojson }} {{ 'é' | tojson(ensure_ascii=true) }}"),
              "\"q\\\"\\\\\\n\\u0001\" \"\\u00e9\"");
    EXPECT_TRUE(edge::test::fails_with(render("{{ x | tojson }}"), {"t.jinja:1:", "not JSON serializable"}));
}

TEST(ChatTemplate, MethodsAndTests) {
    EXPECT_EQ(out("{{ ' a '.strip() }}{{ 'xay'.strip('xy') }}{{ 'a,b'.split(',') }}{{ ' a  b '.split() }}"
                  "{{ 'a b c'.split(' ', 1) }}"),
              "aa['a', 'b']['a', 'b']['a', 'b c']");
    EXPECT_EQ(out("{{ 'Hello'.startswith(('x', 'He')) }} {{ 'Hello'.endswith('lo') }} {{ 'abc'.find('c') }} "
                  "{{ 'aaa'.count('a') }} {{ 'x-y'.replace('-', '+') }} {{ 'hi there'.title() }} {{ 'ab'.upper() }}"),
              "True True 2 3 x+y Hi There AB");
    EXPECT_EQ(
        out("{{ d.get('a') }} {{ d.get('z', 0) }} {{ d.keys() | list }} {{ d.values() | list }} {{ [1, 2].index(2) }}",
            {{"d", {{"a", 1}}}}),
        "1 0 ['a'] [1] 1");
    EXPECT_EQ(
        out("{{ x is defined }} {{ none is none }} {{ 1 is number }} {{ 1 is integer }} {{ 1.0 is float }} "
            "{{ 's' is string }} {{ {} is mapping }} {{ [] is iterable }} {{ 's' is sequence }} {{ true is boolean }}"),
        "False True True True True True True True True True");
    EXPECT_EQ(
        out("{{ 3 is odd }} {{ 4 is even }} {{ 9 is divisibleby 3 }} {{ 1 is eq 1 }} {{ 1 is ne 2 }} {{ 1 is lt 2 }} "
            "{{ 2 is gt 1 }} {{ 'a' is in 'abc' }} {{ true is true }} {{ 0 is false }} {{ x is not none }}"),
        "True True True True True True True True True False True");
}

TEST(ChatTemplate, UndefinedBehavesAsInJinja2) {
    EXPECT_EQ(
        out("[{{ nothing }}]{% for x in nothing %}x{% endfor %}{% if nothing %}y{% endif %}{{ nothing | length }}"),
        "[]0");
    EXPECT_EQ(out("{{ d.missing }}|{{ d['missing'] }}|{{ d.missing is defined }}|{{ nothing ~ 'a' }}",
                  {{"d", ojson::object()}}),
              "||False|a");
    EXPECT_EQ(out("{{ strftime_now is defined }}"), "False");
    EXPECT_TRUE(edge::test::fails_with(render("\n  {{ nothing.attr }}"), {"t.jinja:2:6", "'nothing' is undefined"}));
    EXPECT_TRUE(edge::test::fails_with(render("{{ d.a.b }}", {{"d", ojson::object()}}),
                                       {"t.jinja:1:4", "'dict object' has no attribute 'a'"}));
    EXPECT_TRUE(edge::test::fails_with(render("{{ nothing + 1 }}"), {"t.jinja:1:", "'nothing' is undefined"}));
    // strftime_now exists only when the caller provides it.
    auto t = ChatTemplate::parse("{{ strftime_now('%Y') }}", "d.jinja");
    ASSERT_TRUE(t.ok());
    RenderHooks hooks;
    hooks.strftime_now = [](const std::string& fmt) { return "[" + fmt + "]"; };
    auto r = t->render(ojson::object(), hooks);
    ASSERT_TRUE(r.ok()) << r.message();
    EXPECT_EQ(r.value(), "[%Y]");
    EXPECT_TRUE(edge::test::fails_with(t->render(ojson::object()), {"d.jinja:1:4", "'strftime_now' is undefined"}));
}

TEST(ChatTemplate, ParsedTemplateIsReusableAndCopyable) {
    auto t = ChatTemplate::parse("{% for m in messages %}{{ m.content }};{% endfor %}", "r.jinja");
    ASSERT_TRUE(t.ok());
    ChatTemplate copy = t.value();
    EXPECT_EQ(copy.origin(), "r.jinja");
    for (int i = 0; i < 3; ++i) {
        auto r = copy.render({{"messages", {{{"content", std::to_string(i)}}}}});
        ASSERT_TRUE(r.ok());
        EXPECT_EQ(r.value(), std::to_string(i) + ";");
    }
    EXPECT_TRUE(edge::test::fails_with(copy.render(ojson::array()), {"r.jinja", "must be a JSON object"}));
}

// ---- errors name origin:line:col and the problem ----

TEST(ChatTemplateErrors, ParseErrorsNameOriginLineAndColumn) {
    EXPECT_TRUE(edge::test::fails_with(render("a\nb\n  x {{ 1 + "), {"t.jinja:3:5", "unclosed tag", "'{{'"}));
    EXPECT_TRUE(edge::test::fails_with(render("a\n{% if x %}\nb\n  {{ x | nosuch }}{% endif %}"),
                                       {"t.jinja:4:10", "unknown filter 'nosuch'"}));
    EXPECT_TRUE(
        edge::test::fails_with(render("\n\n{% frobnicate x %}"), {"t.jinja:3:4", "unknown statement 'frobnicate'"}));
    EXPECT_TRUE(
        edge::test::fails_with(render("x\n  {% endfor %}"), {"t.jinja:2:6", "'endfor' without a matching 'for'"}));
    EXPECT_TRUE(edge::test::fails_with(render("{% for x in y %}\nno end"),
                                       {"t.jinja:2:", "unexpected end of template", "endfor"}));
    EXPECT_TRUE(edge::test::fails_with(render("{# never closed"), {"t.jinja:1:1", "unclosed comment"}));
    EXPECT_TRUE(edge::test::fails_with(render("{{ 'abc }}"), {"t.jinja:1:4", "unterminated string"}));
    EXPECT_TRUE(edge::test::fails_with(render("{{ x is nosuchtest }}"), {"t.jinja:1:9", "unknown test 'nosuchtest'"}));
    EXPECT_TRUE(edge::test::fails_with(render("{% break %}"), {"t.jinja:1:4", "'break' outside of a loop"}));
    EXPECT_TRUE(edge::test::fails_with(render("{{ (1 }}"), {"t.jinja:1:7", "unexpected '}'"}));
    // A long bad name is quoted only as a bounded excerpt.
    auto r = render("{% " + std::string(5000, 'z') + " %}");
    EXPECT_TRUE(edge::test::fails_with(r, {"t.jinja:1:4", "unknown statement"}));
    EXPECT_LT(r.message().size(), 200u);
}

TEST(ChatTemplateErrors, RaiseExceptionCarriesTheMessage) {
    auto r =
        render("{% if messages | length == 0 %}\n  {{ raise_exception('Need at least one message!') }}\n{% endif %}",
               {{"messages", ojson::array()}}, "llama.jinja");
    EXPECT_TRUE(edge::test::fails_with(r, {"llama.jinja:2:6", "the template raised: Need at least one message!"}));
}

TEST(ChatTemplateErrors, SandboxRefusesMutatingMethods) {
    EXPECT_TRUE(edge::test::fails_with(render("{% set l = [1] %}\n{{ l.append(2) }}"),
                                       {"t.jinja:2:4", "access to attribute 'append' of 'list' object is unsafe"}));
    EXPECT_TRUE(edge::test::fails_with(render("{{ d.update({'a': 1}) }}", {{"d", ojson::object()}}),
                                       {"t.jinja:1:4", "'update' of 'dict' object is unsafe"}));
    EXPECT_TRUE(edge::test::fails_with(render("{% set x = 1 %}{% set x.y = 2 %}"), {"t.jinja:1:", "not a namespace"}));
}

// ---- limits: hostile templates fail cleanly ----

TEST(ChatTemplateLimits, DeepNestingIsRefused) {
    EXPECT_TRUE(edge::test::fails_with(render("{{ " + std::string(10000, '(') + "1" + std::string(10000, ')') + " }}"),
                                       {"t.jinja:1:", "more than 256 levels"}));
    EXPECT_TRUE(edge::test::fails_with(render("{{ " + std::string(300, '(') + "1" + std::string(300, ')') + " }}"),
                                       {"t.jinja:1:", "more than 256 levels"}));
    EXPECT_TRUE(edge::test::fails_with(render("{{ " + std::string(10000, '[') + std::string(10000, ']') + " }}"),
                                       {"t.jinja:1:", "more than 256 levels"}));
    EXPECT_TRUE(edge::test::fails_with(
        render("{% set ns = namespace(l=[]) %}{% for i in range(1000) %}{% set ns.l = [ns.l] %}{% endfor %}"),
        {"t.jinja:1:", "nested more than 256 deep"}));
    std::string ifs;
    for (int i = 0; i < 2000; ++i) ifs += "{% if true %}";
    EXPECT_TRUE(edge::test::fails_with(render(ifs), {"t.jinja:1:", "nests more than 256 levels"}));
    EXPECT_TRUE(edge::test::fails_with(render("{{ " + std::string(10000, '-') + "1 }}"), {"t.jinja:1:", "nests more"}));
    EXPECT_TRUE(edge::test::fails_with(render("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}\n{{ f(0) }}"),
                                       {"t.jinja:", "macro calls nest more than 256 deep"}));
}

TEST(ChatTemplateLimits, OutputAndWorkAreBounded) {
    EXPECT_TRUE(edge::test::fails_with(render("{% for i in range(100000) %}{{ 'x' * 100000 }}{% endfor %}"),
                                       {"t.jinja:1:", "output would exceed 16 MiB"}));
    EXPECT_TRUE(edge::test::fails_with(render("{{ range(1000000) | length }}"), {"t.jinja:1:4", "range too big"}));
    EXPECT_TRUE(edge::test::fails_with(render("{{ 'x' * 100000000000 }}"), {"t.jinja:1:", "MiB limit"}));
    EXPECT_TRUE(edge::test::fails_with(render("{{ [1] * 100000000 }}"), {"t.jinja:1:", "list would exceed"}));
    EXPECT_TRUE(edge::test::fails_with(
        render("{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}"),
        {"t.jinja:1:", "more than 250000 iterations"}));
    EXPECT_TRUE(edge::test::fails_with(
        render(
            "{% set ns = namespace(s='xxxxxxxx') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}"),
        {"t.jinja:1:", "limit"}));
    EXPECT_TRUE(edge::test::fails_with(render("{% for a in range(10000) %}{{ ('x' * 100000) | length }}{% endfor %}"),
                                       {"t.jinja:1:", "did too much work (more than 4000000 steps)"}));
    // A namespace made to contain itself neither hangs printing nor leaks past the render.
    EXPECT_TRUE(edge::test::fails_with(render("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns }}"),
                                       {"t.jinja:1:", "too deeply"}));
}

// The work limit against what templates do: every fixture renders a 4,000-message conversation
// (1 KiB per message) well inside it, and the template fuzz_chat_template found using 90 million
// units (2-4 s and 700 MiB per render under the old limit of 60 million) is stopped by it.
TEST(ChatTemplateLimits, LongConversationsFitTheWorkLimitAndAFuzzedTemplateDoesNot) {
    ojson messages = ojson::array();
    for (int i = 0; i < 4000; ++i)
        messages.push_back({{"role", i % 2 ? "assistant" : "user"}, {"content", std::string(1024, 'a' + i % 26)}});
    const ojson ctx = {
        {"messages", messages}, {"add_generation_prompt", true}, {"bos_token", "<s>"}, {"eos_token", "</s>"}};
    int rendered = 0;
    for (const auto& e : fs::directory_iterator(chat_dir())) {
        if (e.path().extension() != ".jinja") continue;
        auto r = render(read_file(e.path()), ctx, e.path().filename().c_str());
        ASSERT_TRUE(r.ok()) << r.message();
        EXPECT_GT(r->size(), size_t(4000 * 32)) << e.path();  // (filters_heavy.jinja truncates each message)
        ++rendered;
    }
    EXPECT_GE(rendered, 10);

    const ojson fuzz_ctx = ojson::parse(R"({"messages": [{"role": "system", "content": "You are brief."},
        {"role": "user", "content": "Hi"}, {"role": "assistant", "content": "", "tool_calls": [{"type": "function",
        "function": {"name": "get_time", "arguments": {"zone": "UTC", "n": [1, 2.5, null, true]}}}]},
        {"role": "tool", "content": "12:00"}, {"role": "user", "content": "Thanks"}],
        "tools": [{"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}}],
        "add_generation_prompt": true, "bos_token": "<s>", "eos_token": "</s>"})");
    const std::string slow =
        read_file(fs::path(EDGE_SOURCE_DIR) / "tests/fuzz/regressions/chat-template-slow-90m-work.jinja");
    EXPECT_TRUE(edge::test::fails_with(render(slow, fuzz_ctx), {"t.jinja:", "did too much work"}));
}

}  // namespace
}  // namespace edge::tokenizer
