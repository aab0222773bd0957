// Agent building blocks: the std-only SHA-256 against OpenSSL, sysfs sensors on a fake board,
// and the telemetry pump's rate cap and bound.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <random>
#include <thread>

#include "remote/agent/board_sensors.h"
#include "remote/agent/sha256.h"
#include "remote/agent/telemetry_pump.h"
#include "remote/client/sha256_file.h"
#include "test_support.h"

using namespace edge;

TEST(AgentSha256, MatchesKnownVectorsAndOpenSsl) {
    auto hex = [](const std::array<uint8_t, 32>& d) { return client::digest_hex(d); };
    agent::Sha256 empty;
    EXPECT_EQ(hex(empty.finish()), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    agent::Sha256 abc;
    abc.update(reinterpret_cast<const uint8_t*>("abc"), 3);
    EXPECT_EQ(hex(abc.finish()), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    std::mt19937 rng(3);
    for (size_t n : {55u, 56u, 63u, 64u, 65u, 119u, 120u, 1000u, 100000u}) {
        std::vector<uint8_t> data(n);
        for (auto& b : data) b = static_cast<uint8_t>(rng());
        agent::Sha256 h;
        size_t pos = 0;  // odd chunking exercises the buffer
        while (pos < n) {
            size_t k = std::min<size_t>(n - pos, 1 + rng() % 97);
            h.update(data.data() + pos, k);
            pos += k;
        }
        EXPECT_EQ(h.finish(), client::sha256_of(data.data(), data.size())) << n;
    }
    std::string model = test::shared("models/stories260K/stories260K.gguf");
    EDGE_REQUIRE_SHARED(model);
    auto a = agent::sha256_file(model);
    auto b = client::sha256_of_file(model);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a.value(), b.value());
    EXPECT_TRUE(edge::test::fails_with(agent::sha256_file("/nonexistent/x"),
                                       {"/nonexistent/x: ", "No such file or directory"}));
}

TEST(BoardSensors, ReadsAFakeJetsonAndReportsAbsentOtherwise) {
    auto dir = test::temp_dir("sensors");
    auto write = [&](const std::string& rel, const std::string& text) {
        std::filesystem::create_directories((dir / rel).parent_path());
        std::ofstream(dir / rel) << text;
    };
    // Nothing there: every source absent, not zero.
    agent::BoardSensors none((dir / "sys").string(), (dir / "proc").string());
    auto r0 = none.read();
    EXPECT_FALSE(r0.temperature_c.has_value());
    EXPECT_FALSE(r0.power_w.has_value());
    EXPECT_FALSE(r0.mem_available_bytes.has_value());
    EXPECT_NE(none.describe().find("absent"), std::string::npos);

    write("sys/class/thermal/thermal_zone0/temp", "41500\n");
    write("sys/class/thermal/thermal_zone1/temp", "52250\n");
    write("sys/class/hwmon/hwmon0/name", "ina3221\n");
    write("sys/class/hwmon/hwmon0/in1_label", "VDD_IN\n");
    write("sys/class/hwmon/hwmon0/in1_input", "5000\n");    // mV
    write("sys/class/hwmon/hwmon0/curr1_input", "1200\n");  // mA
    write("proc/meminfo", "MemTotal:       65536000 kB\nMemFree: 1 kB\nMemAvailable:   1024 kB\n");
    agent::BoardSensors jetson((dir / "sys").string(), (dir / "proc").string());
    auto r = jetson.read();
    ASSERT_TRUE(r.temperature_c.has_value());
    EXPECT_DOUBLE_EQ(*r.temperature_c, 52.25);
    ASSERT_TRUE(r.power_w.has_value());
    EXPECT_DOUBLE_EQ(*r.power_w, 6.0);
    ASSERT_TRUE(r.mem_available_bytes.has_value());
    EXPECT_EQ(*r.mem_available_bytes, 1024u * 1024u);
    EXPECT_EQ(jetson.mem_total_bytes().value_or(0), 65536000ull * 1024);

    write("sys/class/hwmon/hwmon1/power1_input", "2500000\n");  // µW, generic hwmon
    std::filesystem::remove_all(dir / "sys/class/hwmon/hwmon0");
    EXPECT_DOUBLE_EQ(agent::BoardSensors((dir / "sys").string(), (dir / "proc").string()).read().power_w.value_or(-1),
                     2.5);
}

// flush() returns only once a batch already being written has gone out: the run's acknowledgement
// the worker sends next must not overtake its samples (a short profile reported no samples).
TEST(TelemetryPump, FlushWaitsForTheBatchBeingWritten) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    agent::FrameWriter out(fds[1]);
    agent::TelemetryPump pump(out, 2048);
    for (uint32_t i = 0; i < 2000; ++i) {  // a batch larger than the pipe's buffer: its write blocks
        protocol::TelemetrySample s;
        s.tokens_generated = i;
        s.token_latency_ms = 1.0;
        s.ttft_ms = 2.0;
        pump.push(s);
    }
    const auto t0 = std::chrono::steady_clock::now();
    while (pump.batches_sent() == 0 && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5))
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSERT_EQ(pump.batches_sent(), 1u) << "the pump took the batch and is writing it";
    std::atomic<bool> flushed{false};
    std::thread flusher([&] {
        pump.flush();
        flushed = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_FALSE(flushed.load()) << "flush returned while its samples were still being written";
    protocol::FrameReader r;
    size_t samples = 0;
    uint8_t buf[65536];
    while (samples < 2000) {
        const ssize_t n = ::read(fds[0], buf, sizeof buf);
        ASSERT_GT(n, 0);
        r.feed(buf, size_t(n));
        for (;;) {
            auto m = r.next();
            ASSERT_TRUE(m.ok()) << m.message();
            if (!m.value()) break;
            samples += std::get<protocol::TelemetryBatch>(*m.value()).samples.size();
        }
    }
    flusher.join();
    EXPECT_TRUE(flushed.load());
    ::close(fds[0]);
    ::close(fds[1]);
}

TEST(TelemetryPump, CapsTheRateAndBoundsTheBuffer) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    std::vector<protocol::TelemetryBatch> batches;
    std::thread reader([&] {
        protocol::FrameReader r;
        uint8_t buf[65536];
        ssize_t n;
        while ((n = ::read(fds[0], buf, sizeof buf)) > 0) {
            r.feed(buf, static_cast<size_t>(n));
            for (;;) {
                auto m = r.next();
                ASSERT_TRUE(m.ok()) << m.message();
                if (!m.value()) break;
                batches.push_back(std::get<protocol::TelemetryBatch>(*m.value()));
            }
        }
    });
    {
        agent::FrameWriter out(fds[1]);
        agent::TelemetryPump pump(out, 100);
        pump.set_rate_hz(1000);  // clamped to 20
        auto t0 = std::chrono::steady_clock::now();
        uint32_t pushed = 0;
        while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(500)) {
            protocol::TelemetrySample s;
            s.tokens_generated = ++pushed;
            pump.push(s);
            if (pushed % 64 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
        pump.flush();
        EXPECT_LE(pump.batches_sent(), 500 / 50 + 2u);
    }
    ::close(fds[1]);
    reader.join();
    ::close(fds[0]);
    ASSERT_FALSE(batches.empty());
    uint64_t dropped = 0;
    for (const auto& b : batches) {
        EXPECT_LE(b.samples.size(), 100u);
        dropped += b.dropped;
    }
    EXPECT_GT(dropped, 0u);  // far more pushed than 20 Hz x 100 samples can carry
    EXPECT_LE(batches.size(), 12u);
}
