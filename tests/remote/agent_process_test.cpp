// edge-agent as a real subprocess over pipes: a stories260K workload with telemetry, version
// mismatch, busy, malformed frames from either side, bad hashes, cancel and end of input.
#include <gtest/gtest.h>
#include <time.h>

#include <algorithm>
#include <cstdio>

#include "engine/model/gguf_writer.h"
#include "engine/model/loader.h"
#include "engine/tokenizer/chat.h"
#include "engine/tokenizer/tokenizer.h"
#include "remote/client/agent_link.h"
#include "remote/client/profile.h"
#include "remote/client/sha256_file.h"
#include "remote/protocol/trace.h"
#include "remote_test_util.h"
#include "test_support.h"

using namespace edge;
using namespace edge::protocol;

namespace {

std::string model_path() { return test::shared("models/stories260K/stories260K.gguf"); }

std::vector<std::string> agent_argv(const std::filesystem::path& dir) {
    return {EDGE_AGENT_PATH, "--lock", (dir / "agent.lock").string(), "--threads", "1", "--root", dir.string()};
}

std::unique_ptr<client::AgentLink> open_agent(const std::filesystem::path& dir) {
    auto t = client::start_local_agent(agent_argv(dir));
    EXPECT_TRUE(t.ok()) << t.message();
    if (!t.ok()) return nullptr;
    auto l = client::AgentLink::open(std::move(t).value());
    EXPECT_TRUE(l.ok()) << l.message();
    return l.ok() ? std::move(l).value() : nullptr;
}

// An agent with stories260K loaded (null after a failure, reported).
std::unique_ptr<client::AgentLink> open_loaded_agent(const std::filesystem::path& dir) {
    auto link = open_agent(dir);
    if (!link) return nullptr;
    const uint32_t id = link->next_request_id();
    EXPECT_TRUE(link->send(LoadEngine{id, model_path(), std::nullopt, "", ""}).ok());
    if (!test::collect(*link, id, 30000).ack) {
        ADD_FAILURE() << "the engine did not load";
        return nullptr;
    }
    return link;
}

// Receives until the first run-result (a run is under way), at most 30 s (a loaded machine).
void wait_for_first_result(client::AgentLink& link) {
    for (int i = 0; i < 300; ++i) {
        auto m = link.receive(100);
        ASSERT_TRUE(m.ok()) << m.message();
        if (m.value() && std::holds_alternative<RunResult>(*m.value())) return;
    }
    ADD_FAILURE() << "no run-result within 30 s: the run did not start";
}

}  // namespace

TEST(AgentProcess, ServesStories260KWithTelemetry) {
    EDGE_REQUIRE_SHARED(model_path());
    auto dir = test::temp_dir("agent");
    auto link = open_agent(dir);
    ASSERT_TRUE(link);
    EXPECT_EQ(link->agent_hello().role, "agent");
    EXPECT_GT(link->agent_hello().cpu_threads, 0u);

    auto trace = new_trace();
    auto digest = client::sha256_of_file(model_path());
    ASSERT_TRUE(digest.ok());
    uint32_t load_id = link->next_request_id();
    ASSERT_TRUE(link->send(LoadEngine{load_id, model_path(), digest.value(), "", format_traceparent(trace)}).ok());
    auto loaded = test::collect(*link, load_id, 30000);
    ASSERT_TRUE(loaded.ack.has_value()) << (loaded.error ? loaded.error->message : "timeout");
    EXPECT_NE(loaded.ack->detail.find("gguf"), std::string::npos) << loaded.ack->detail;
    bool traced = std::any_of(loaded.logs.begin(), loaded.logs.end(), [&](const LogLine& l) {
        return l.trace_id == trace.trace_id && l.span_id != trace.span_id && l.span_id != std::array<uint8_t, 8>{};
    });
    EXPECT_TRUE(traced) << "agent log lines carry the studio's trace id and their own span id";

    RunWorkload run;
    run.request_id = link->next_request_id();
    run.prompts = {"Once upon a time", "The little dog"};
    run.max_tokens = 200;
    run.traceparent = format_traceparent(trace);
    ASSERT_TRUE(link->send(run).ok());
    auto c = test::collect(*link, run.request_id, 60000);
    test::expect_live_telemetry(c, 2);
    std::sort(c.ages_ms.begin(), c.ages_ms.end());
    if (!c.ages_ms.empty())
        std::printf("[telemetry over pipes] %zu batches, newest-sample age median %.2f ms, max %.2f ms\n",
                    c.ages_ms.size(), c.ages_ms[c.ages_ms.size() / 2], c.ages_ms.back());
    std::printf("[output] %s\n", c.results[0].text.c_str());

    auto status = link->stop(10000);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_EQ(status.value(), 0);
}

// run-workload with `chat` (protocol 5): each prompt becomes a user message in the engine's own
// chat template - the tokens the agent runs are the rendered template's, as `generate --chat`
// encodes them - and an engine without a template is refused naming it.
TEST(AgentProcess, ChatPromptsRunInTheEnginesChatTemplate) {
    EDGE_REQUIRE_SHARED(model_path());
    auto dir = test::temp_dir("agent-chat");
    auto m = model::load_model(model_path());
    ASSERT_TRUE(m.ok()) << m.message();
    m->tokenizer.chat_template =
        "{{ bos_token }}{% for message in messages %}{{ message['role'] }}: {{ message['content'] }}\n"
        "{% endfor %}{% if add_generation_prompt %}assistant:{% endif %}";
    const std::string chat_model = (dir / "chat.gguf").string();
    ASSERT_TRUE(model::write_gguf_model(*m, chat_model).ok());
    auto tok = tokenizer::make_tokenizer(m->tokenizer);
    ASSERT_TRUE(tok.ok()) << tok.message();
    auto want = tokenizer::render_chat_prompt(m->tokenizer, **tok, {{"user", "Once upon a time"}}, true);
    ASSERT_TRUE(want.ok()) << want.message();
    ASSERT_EQ(want->ids.front(), (*tok)->bos_id()) << "the template writes BOS itself";
    const size_t plain_tokens = (*tok)->encode("Once upon a time", true).size();
    ASSERT_NE(want->ids.size(), plain_tokens);

    auto link = open_agent(dir);
    ASSERT_TRUE(link);
    auto run = [&](const std::string& model, bool chat) {
        const uint32_t load = link->next_request_id();
        EXPECT_TRUE(link->send(LoadEngine{load, model, std::nullopt, "", ""}).ok());
        EXPECT_TRUE(test::collect(*link, load, 30000).ack);
        RunWorkload r;
        r.request_id = link->next_request_id();
        r.prompts = {"Once upon a time"};
        r.max_tokens = 6;
        r.chat = chat;
        EXPECT_TRUE(link->send(r).ok());
        return test::collect(*link, r.request_id, 60000);
    };
    auto chat = run(chat_model, true);
    ASSERT_TRUE(chat.ack) << (chat.error ? chat.error->message : "timeout");
    ASSERT_EQ(chat.results.size(), 1u);
    EXPECT_EQ(chat.results[0].prompt_tokens, want->ids.size());
    auto plain = run(chat_model, false);
    ASSERT_TRUE(plain.ack) << (plain.error ? plain.error->message : "timeout");
    ASSERT_EQ(plain.results.size(), 1u);
    EXPECT_EQ(plain.results[0].prompt_tokens, plain_tokens);

    auto none = run(model_path(), true);
    ASSERT_TRUE(none.error) << "an engine without a chat template cannot run chat prompts";
    EXPECT_EQ(none.error->code, ErrorCode::BadRequest);
    for (const char* part : {"stories260K.gguf", "prompt 0", "chat template"})
        EXPECT_NE(none.error->message.find(part), std::string::npos) << part << " in " << none.error->message;
    auto status = link->stop(10000);
    ASSERT_TRUE(status.ok()) << status.message();
}

TEST(AgentProcess, VersionMismatchCarriesBothVersions) {
    auto dir = test::temp_dir("agent-mismatch");
    auto t = client::start_local_agent(agent_argv(dir));
    ASSERT_TRUE(t.ok()) << t.message();
    auto hs = encode_handshake_request(99);
    ASSERT_TRUE(t.value()->write_all(hs.data(), hs.size()).ok());
    std::vector<uint8_t> got;
    uint8_t buf[64];
    while (got.size() < kHandshakeReplyBytes) {
        auto n = t.value()->read_some(buf, sizeof buf, 5000);
        ASSERT_TRUE(n.ok()) << n.message();
        ASSERT_GT(n.value(), 0u);
        got.insert(got.end(), buf, buf + n.value());
    }
    auto rep = decode_handshake_reply(got);
    ASSERT_TRUE(rep.ok()) << rep.message();
    EXPECT_EQ(rep->status, HandshakeStatus::VersionMismatch);
    EXPECT_EQ(rep->agent_version, kProtocolVersion);
    EXPECT_EQ(rep->client_version, 99u);
    EXPECT_EQ(t.value()->close(5000), 3);
}

// What the studio's Boards page runs (remote::run_profile, board_controller.cpp) against an
// agent of the previous protocol: no restart loop, one error naming both versions and what to
// do - deploy a matching agent.
TEST(AgentProcess, AnOlderAgentIsAnErrorNamingBothVersionsAndOfferingToRedeploy) {
    const std::string older = std::to_string(kProtocolVersion - 1), ours = std::to_string(kProtocolVersion);
    // A fake agent of protocol N-1: reads the 16-byte request, replies "version mismatch".
    const std::string script = "head -c 16 >/dev/null; printf 'EDGEWIRE\\001\\000\\000\\000\\" +
                               std::to_string(kProtocolVersion - 1) + "\\000\\000\\000\\" + ours +
                               "\\000\\000\\000'; sleep 1";
    client::ProfileRequest req;
    req.engine_path = "model.edge";
    req.prompts = {"Once upon a time"};
    client::SupervisorOptions o;
    o.restart_delay_ms = 10;
    auto r = client::run_profile(client::local_agent_starter({"/bin/sh", "-c", script}), req, o);
    EXPECT_TRUE(test::fails_with(
        r, {"the agent speaks " + older, "this client speaks " + ours, "deploy a matching edge-agent"}));
}

TEST(AgentProcess, SecondClientIsToldBusy) {
    auto dir = test::temp_dir("agent-busy");
    auto first = open_agent(dir);
    ASSERT_TRUE(first);
    auto t = client::start_local_agent(agent_argv(dir));
    ASSERT_TRUE(t.ok());
    auto second = client::AgentLink::open(std::move(t).value());
    ASSERT_FALSE(second.ok());
    EXPECT_NE(second.message().find("busy"), std::string::npos) << second.message();
    EXPECT_TRUE(first->stop(5000).ok());
}

TEST(AgentProcess, MalformedFrameFromClientIsAProtocolError) {
    auto dir = test::temp_dir("agent-bad");
    auto link = open_agent(dir);
    ASSERT_TRUE(link);
    const uint8_t junk[] = {4, 0, 0, 0, 0x99, 0, 0, 0, 1, 2, 3, 4};  // type 153
    ASSERT_TRUE(link->transport().write_all(junk, sizeof junk).ok());
    std::optional<ErrorMsg> error;
    for (int i = 0; i < 50 && !error; ++i) {
        auto m = link->receive(200);
        if (!m.ok()) break;  // the agent closes after reporting
        if (m.value())
            if (auto* e = std::get_if<ErrorMsg>(&*m.value())) error = *e;
    }
    ASSERT_TRUE(error.has_value());
    EXPECT_EQ(error->code, ErrorCode::Protocol);
    EXPECT_NE(error->message.find("unknown frame type 153"), std::string::npos) << error->message;
    EXPECT_EQ(link->transport().close(5000), 5);
}

TEST(AgentProcess, MalformedFrameFromAgentIsRejectedByTheClient) {
    // A fake "agent": a valid welcome, then a frame header with an unknown type.
    std::string script =
        "head -c 16 >/dev/null; printf 'EDGEWIRE\\000\\000\\000\\000\\001\\000\\000\\000\\001\\000\\000\\000"
        "\\004\\000\\000\\000\\231\\000\\000\\000abcd'; sleep 1";
    auto t = client::start_local_agent({"/bin/sh", "-c", script});
    ASSERT_TRUE(t.ok());
    auto l = client::AgentLink::open(std::move(t).value());
    ASSERT_FALSE(l.ok());
    EXPECT_NE(l.message().find("unknown frame type 153"), std::string::npos) << l.message();

    std::string oversized =
        "head -c 16 >/dev/null; printf 'EDGEWIRE\\000\\000\\000\\000\\001\\000\\000\\000\\001\\000\\000\\000"
        "\\377\\377\\377\\377\\001\\000\\000\\000'; sleep 1";
    auto t2 = client::start_local_agent({"/bin/sh", "-c", oversized});
    ASSERT_TRUE(t2.ok());
    auto l2 = client::AgentLink::open(std::move(t2).value());
    ASSERT_FALSE(l2.ok());
    EXPECT_NE(l2.message().find("over the limit"), std::string::npos) << l2.message();
}

TEST(AgentProcess, BadHashAndMissingEngineAreReported) {
    EDGE_REQUIRE_SHARED(model_path());
    auto dir = test::temp_dir("agent-hash");
    auto link = open_agent(dir);
    ASSERT_TRUE(link);
    uint32_t id = link->next_request_id();
    ASSERT_TRUE(link->send(RunWorkload{id, {"x"}, 4, 0, 0, 1, 1, 20, ""}).ok());
    auto c = test::collect(*link, id, 10000);
    ASSERT_TRUE(c.error.has_value());
    EXPECT_EQ(c.error->code, ErrorCode::NotLoaded);

    id = link->next_request_id();
    ASSERT_TRUE(link->send(LoadEngine{id, model_path(), Sha256{}, "", ""}).ok());
    c = test::collect(*link, id, 10000);
    ASSERT_TRUE(c.error.has_value());
    EXPECT_EQ(c.error->code, ErrorCode::LoadFailed);
    EXPECT_NE(c.error->message.find("SHA-256 mismatch"), std::string::npos) << c.error->message;

    id = link->next_request_id();
    ASSERT_TRUE(link->send(LoadEngine{id, "no/such/model.gguf", std::nullopt, "", ""}).ok());
    c = test::collect(*link, id, 10000);
    ASSERT_TRUE(c.error.has_value());
    EXPECT_NE(c.error->message.find("no/such/model.gguf"), std::string::npos) << c.error->message;
    EXPECT_TRUE(link->stop(5000).ok());
}

TEST(AgentProcess, CancelStopsARunAndEndOfInputExitsCleanly) {
    EDGE_REQUIRE_SHARED(model_path());
    auto link = open_loaded_agent(test::temp_dir("agent-cancel"));
    ASSERT_TRUE(link);

    RunWorkload run{
        link->next_request_id(), std::vector<std::string>(200, "Once upon a time"), 400, 0.8f, 40, 0.95f, 7, 20, ""};
    ASSERT_TRUE(link->send(run).ok());
    wait_for_first_result(*link);  // then cancel
    uint32_t stop_id = link->next_request_id();
    ASSERT_TRUE(link->send(Stop{stop_id, StopScope::Cancel}).ok());
    auto c = test::collect(*link, run.request_id, 20000);
    ASSERT_TRUE(c.ack.has_value());
    EXPECT_NE(c.ack->detail.find("cancelled"), std::string::npos) << c.ack->detail;
    EXPECT_LT(c.results.size(), 200u);

    // A new run, then end of input mid-run: the agent stops and exits 0.
    ASSERT_TRUE(
        link->send(RunWorkload{link->next_request_id(), std::vector<std::string>(200, "Hi"), 400, 0, 0, 1, 1, 20, ""})
            .ok());
    auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(link->transport().close(10000), 0);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
}

// Stop with scope Request cancels one request by id and nothing else: a queued one is dropped
// (and acknowledged so its client stops waiting), the running one stops between tokens, the
// request behind them runs in full; a finished or unknown id is an error to that stop alone.
TEST(AgentProcess, CancelOneRequestByIdLeavesTheOthersAndUnknownIdsAreErrorsToTheStopAlone) {
    EDGE_REQUIRE_SHARED(model_path());
    auto link = open_loaded_agent(test::temp_dir("agent-cancel-one"));
    ASSERT_TRUE(link);

    auto run = [&](int prompts) {
        return RunWorkload{link->next_request_id(),
                           std::vector<std::string>(size_t(prompts), "Once upon a time"),
                           24,
                           0,
                           0,
                           1,
                           1,
                           20,
                           ""};
    };
    const RunWorkload a = run(1000), b = run(2), c = run(2);
    for (const RunWorkload* r : {&a, &b, &c}) ASSERT_TRUE(link->send(*r).ok());
    wait_for_first_result(*link);  // a is running
    auto stop = [&](uint32_t target) {
        const uint32_t sid = link->next_request_id();
        EXPECT_TRUE(link->send(Stop{sid, StopScope::Request, target}).ok());
        return sid;
    };
    // b, queued behind a: dropped, and acknowledged as such.
    const uint32_t s1 = stop(b.request_id);
    auto cb = test::collect(*link, b.request_id, 10000);
    ASSERT_TRUE(cb.ack.has_value());
    EXPECT_EQ(cb.ack->detail, "cancelled before it started");
    // collect() keeps every run-result it passes (a's among them): count the target's own.
    auto results_of = [](const test::Collected& c, uint32_t rid) {
        return std::count_if(c.results.begin(), c.results.end(),
                             [&](const RunResult& r) { return r.request_id == rid; });
    };
    EXPECT_EQ(results_of(cb, b.request_id), 0);
    auto c1 = test::collect(*link, s1, 10000);
    ASSERT_TRUE(c1.ack.has_value());
    EXPECT_NE(c1.ack->detail.find("it was queued"), std::string::npos) << c1.ack->detail;
    // a, running: stops between tokens.
    const uint32_t s2 = stop(a.request_id);
    auto c2 = test::collect(*link, s2, 10000);
    ASSERT_TRUE(c2.ack.has_value());
    EXPECT_NE(c2.ack->detail.find("stops between tokens"), std::string::npos) << c2.ack->detail;
    auto ca = test::collect(*link, a.request_id, 20000);
    ASSERT_TRUE(ca.ack.has_value());
    EXPECT_NE(ca.ack->detail.find("cancelled"), std::string::npos) << ca.ack->detail;
    // c was not touched: every prompt runs.
    auto cc = test::collect(*link, c.request_id, 30000);
    ASSERT_TRUE(cc.ack.has_value()) << (cc.error ? cc.error->message : "no ack");
    EXPECT_EQ(results_of(cc, c.request_id), 2);
    EXPECT_EQ(cc.ack->detail.find("cancelled"), std::string::npos) << cc.ack->detail;
    // A finished request and an id never sent: errors to those stops, the session goes on.
    for (uint32_t target : {a.request_id, 9999u}) {
        const uint32_t s = stop(target);
        auto ce = test::collect(*link, s, 10000);
        ASSERT_TRUE(ce.error.has_value()) << target;
        EXPECT_EQ(ce.error->code, ErrorCode::BadRequest);
        EXPECT_NE(ce.error->message.find("request " + std::to_string(target) + " is neither queued nor running"),
                  std::string::npos)
            << ce.error->message;
    }
    const RunWorkload d = run(1);
    ASSERT_TRUE(link->send(d).ok());
    auto cd = test::collect(*link, d.request_id, 30000);
    ASSERT_TRUE(cd.ack.has_value());
    EXPECT_EQ(results_of(cd, d.request_id), 1);
    EXPECT_TRUE(link->stop(5000).ok());
}

// A prompt that repeats what the cache already holds (the same story opening, then a longer
// one that starts with it) is served from the cached positions: the same greedy text as a
// fresh prefill, and the reported hit rate counts exactly the reused positions.
TEST(AgentProcess, SharedPromptPrefixIsServedFromTheKvCache) {
    EDGE_REQUIRE_SHARED(model_path());
    auto dir = test::temp_dir("agent-prefix");
    auto link = open_agent(dir);
    ASSERT_TRUE(link);
    auto digest = client::sha256_of_file(model_path());
    ASSERT_TRUE(digest.ok());
    uint32_t load_id = link->next_request_id();
    ASSERT_TRUE(link->send(LoadEngine{load_id, model_path(), digest.value(), "", ""}).ok());
    auto loaded = test::collect(*link, load_id, 30000);
    ASSERT_TRUE(loaded.ack.has_value()) << (loaded.error ? loaded.error->message : "timeout");

    RunWorkload run;
    run.request_id = link->next_request_id();
    // BOS + 4 pieces each ("Once upon a time" encodes to [1, 403, 407, 261, 378], ASSETS.md).
    run.prompts = {"Once upon a time", "Once upon a time", "Once upon a time"};
    run.max_tokens = 30;
    ASSERT_TRUE(link->send(run).ok());
    auto c = test::collect(*link, run.request_id, 60000);
    test::expect_live_telemetry(c, 3);
    EXPECT_EQ(c.results[1].text, c.results[0].text) << "a prompt served from cached positions must decode the same";
    EXPECT_EQ(c.results[2].text, c.results[0].text);
    EXPECT_EQ(c.results[0].text.rfind(", there was a little girl named Lily", 0), 0u) << c.results[0].text;
    // First prompt: nothing cached (0 of 5). Later ones: 4 of 5 reused (the last prompt token
    // always runs, its logits start the generation). Cumulative: 8 / 15.
    double last_rate = -1;
    for (const auto& b : c.batches)
        for (const auto& s : b.samples)
            if (s.prompt_index == 2 && s.kv_hit_rate) last_rate = *s.kv_hit_rate;
    EXPECT_NEAR(last_rate, 8.0 / 15.0, 1e-9);
    ASSERT_TRUE(link->stop(10000).ok());
}
