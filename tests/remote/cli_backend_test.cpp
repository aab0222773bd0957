// The whole path a user takes, over the real loopback sshd: an .edge engine compiled here is
// deployed with `edgestudio-cli deploy` and profiled with `edgestudio-cli profile --backend ...`;
// the JSON names the backend the agent really used (and why CUDA was not), and a forced CUDA
// backend on a board without a device fails with the probe's reason.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/compile/compile.h"
#include "engine/model/loader.h"
#include "engine/runtime/device.h"
#include "remote_test_util.h"
#include "test_support.h"

#ifdef EDGE_CLI_PATH

using edge::model::load_model;
using edge::runtime::DeviceReport;
using edge::runtime::probe_devices;

using namespace edge;
namespace fs = std::filesystem;

namespace {

class CliBackendTest : public ::testing::Test {
protected:
    void SetUp() override {
        const std::string gguf = test::shared("models/stories260K/stories260K.gguf");
        EDGE_REQUIRE_SHARED(gguf);
        std::string why;
        sshd_ = test::Sshd::start(&why);
        ASSERT_TRUE(sshd_) << why;
        dir_ = sshd_->dir;
        kh_ = sshd_->write_known_hosts();
        auto m = load_model(gguf);
        ASSERT_TRUE(m.ok()) << m.message();
        compile::CompileOptions o;
        o.out_path = (dir_ / "stories260K.edge").string();
        o.max_seq = 128;
        auto rep = compile::compile(m.value(), o);
        ASSERT_TRUE(rep.ok()) << rep.message();
        engine_ = o.out_path;
    }
    test::Shell cli(std::vector<std::string> args) const {
        for (const std::string& a : {std::string("--board"), sshd_->user + "@127.0.0.1:" + std::to_string(sshd_->port),
                                     std::string("--identity"), sshd_->client_key, std::string("--known-hosts"), kh_,
                                     std::string("--root"), (dir_ / "board").string()})
            args.push_back(a);
        return test::run_shell(test::command_line(EDGE_CLI_PATH, args), dir_);
    }
    std::unique_ptr<test::Sshd> sshd_;
    fs::path dir_;
    std::string kh_, engine_;
};

}  // namespace

TEST_F(CliBackendTest, DeployedEngineIsProfiledOnTheBackendAskedFor) {
    auto d = cli({"deploy", engine_, "--agent", EDGE_AGENT_PATH, "--version", "v1", "--json"});
    ASSERT_EQ(d.rc, 0) << d.err;

    // Forced CPU: the engine runs on the CPU backend and the JSON says so.
    const std::string prom = (dir_ / "agent.prom").string();
    auto p = cli({"profile", "-p", "Once upon a time", "-n", "24", "--threads", "1", "--backend", "cpu", "--json",
                  "--prometheus", prom});
    ASSERT_EQ(p.rc, 0) << p.err;
    auto pj = nlohmann::json::parse(p.out, nullptr, false);
    ASSERT_TRUE(pj.is_array() && pj.size() == 1) << p.out;
    const std::string engine = pj[0]["engine"].get<std::string>();
    EXPECT_NE(engine.find("stories260K.edge: edge,"), std::string::npos) << engine;
    EXPECT_NE(engine.find("; backend: cpu ("), std::string::npos) << engine;
    EXPECT_NE(engine.find("forced by --backend cpu"), std::string::npos) << engine;
    ASSERT_EQ(pj[0]["results"].size(), 1u);
    EXPECT_EQ(pj[0]["results"][0]["text"].get<std::string>().rfind(", there was a little girl named Lily", 0), 0u)
        << p.out;
    EXPECT_TRUE(pj[0]["summary"]["kv_hit_rate"].is_number()) << pj[0]["summary"].dump();
    // The agent's metrics label the loaded engine's backend.
    const std::string metrics = test::read_file(prom);
    EXPECT_NE(metrics.find("backend=\"cpu ("), std::string::npos) << metrics;
    EXPECT_NE(metrics.find("forced by --backend cpu\""), std::string::npos) << metrics;

    const DeviceReport dev = probe_devices();
    // The default (auto): CUDA when the board has a device, else the CPU with the reason.
    auto a = cli({"profile", "-p", "Once upon a time", "-n", "8", "--threads", "1", "--json"});
    ASSERT_EQ(a.rc, 0) << a.err;
    auto aj = nlohmann::json::parse(a.out, nullptr, false);
    ASSERT_TRUE(aj.is_array() && aj.size() == 1) << a.out;
    const std::string auto_engine = aj[0]["engine"].get<std::string>();
    const std::string hello = aj[0]["agent"]["backend"].get<std::string>();
    if (dev.cuda_usable) {
        EXPECT_NE(auto_engine.find("; backend: cuda (" + dev.cuda_name + ")"), std::string::npos) << auto_engine;
    } else {
        EXPECT_NE(auto_engine.find("CUDA not used: " + dev.reason), std::string::npos) << auto_engine;
        EXPECT_NE(hello.find("CUDA not used: " + dev.reason), std::string::npos) << hello;
    }

    // Forced CUDA: runs there on a GPU board; elsewhere the load fails naming the probe's reason.
    auto c =
        cli({"profile", "-p", "Once upon a time", "-n", "8", "--threads", "1", "--backend", "cuda", "--restarts", "0"});
    if (dev.cuda_usable) {
        EXPECT_EQ(c.rc, 0) << c.err;
    } else {
        EXPECT_NE(c.rc, 0) << c.out;
        EXPECT_NE(c.err.find("cuda backend unavailable: " + dev.reason), std::string::npos) << c.err;
    }

    auto bad = cli({"profile", "--backend", "tpu"});
    EXPECT_NE(bad.rc, 0);
    EXPECT_NE(bad.err.find("tpu"), std::string::npos) << bad.err;
}

#endif
