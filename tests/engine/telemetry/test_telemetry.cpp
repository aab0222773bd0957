#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "engine/telemetry/memory.h"
#include "engine/telemetry/stats.h"
#include "engine/telemetry/stopwatch.h"
#include "engine/telemetry/system_info.h"

using edge::telemetry::cpu_count;
using edge::telemetry::cpu_model;
using edge::telemetry::MemoryUsage;
using edge::telemetry::parse_cpu_model;
using edge::telemetry::parse_proc_status;
using edge::telemetry::process_memory;
using edge::telemetry::stat_mean;
using edge::telemetry::stat_median;
using edge::telemetry::stat_percentile;
using edge::telemetry::stat_stddev;
using edge::telemetry::Stopwatch;
using edge::telemetry::summarize;
using edge::telemetry::Summary;

using namespace edge;

TEST(Telemetry, ParsesProcStatus) {
    const char* text =
        "Name:\tcat\nVmPeak:\t  9000 kB\nVmHWM:\t    2048 kB\nVmRSS:\t    1024 kB\n"
        "RssAnon:\t     100 kB\nRssFile:\t     900 kB\nRssShmem:\t 24 kB\n";
    MemoryUsage m = parse_proc_status(text);
    EXPECT_TRUE(m.ok);
    EXPECT_EQ(m.rss_bytes, 1024 * 1024);
    EXPECT_EQ(m.peak_rss_bytes, 2048 * 1024);
    EXPECT_EQ(m.rss_anon_bytes, 100 * 1024);
    EXPECT_EQ(m.rss_file_bytes, 900 * 1024);
    EXPECT_FALSE(parse_proc_status("garbage\n").ok);
}

TEST(Telemetry, ProcessMemoryGrowsWithTouchedPages) {
    MemoryUsage before = process_memory();
    ASSERT_TRUE(before.ok);
    EXPECT_GT(before.rss_bytes, 0);
    EXPECT_GE(before.peak_rss_bytes, before.rss_bytes);
    std::vector<char> big(64 << 20, 1);
    MemoryUsage after = process_memory();
    EXPECT_GE(after.peak_rss_bytes, before.rss_bytes + (48 << 20)) << int(big[12345]);
}

TEST(Telemetry, Stopwatch) {
    Stopwatch sw;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_GE(sw.seconds(), 0.019);
    EXPECT_LT(sw.seconds(), 5.0);
    sw.restart();
    EXPECT_LT(sw.millis(), 15.0);
}

TEST(Telemetry, CpuModel) {
    EXPECT_EQ(parse_cpu_model("processor\t: 0\nmodel name\t: Fancy CPU @ 3GHz\n"), "Fancy CPU @ 3GHz");
    EXPECT_EQ(parse_cpu_model("Hardware\t: BCM2835\nModel\t: Raspberry Pi 4\n"), "Raspberry Pi 4");
    EXPECT_EQ(parse_cpu_model("nothing here\n"), "");
    EXPECT_FALSE(cpu_model().empty());
    EXPECT_GE(cpu_count(), 1);
}

TEST(Telemetry, Stats) {
    std::vector<double> v{5, 1, 4, 2, 3};
    EXPECT_DOUBLE_EQ(stat_median(v), 3.0);
    EXPECT_DOUBLE_EQ(stat_median({1, 2, 3, 4}), 2.5);
    EXPECT_DOUBLE_EQ(stat_percentile(v, 0), 1.0);
    EXPECT_DOUBLE_EQ(stat_percentile(v, 100), 5.0);
    EXPECT_DOUBLE_EQ(stat_percentile(v, 25), 2.0);
    EXPECT_DOUBLE_EQ(stat_percentile({10, 20}, 90), 19.0);
    EXPECT_DOUBLE_EQ(stat_mean(v), 3.0);
    EXPECT_NEAR(stat_stddev(v), 1.5811388, 1e-6);
    EXPECT_DOUBLE_EQ(stat_median({}), 0.0);
    Summary s = summarize(v);
    EXPECT_EQ(s.n, 5);
    EXPECT_DOUBLE_EQ(s.min, 1.0);
    EXPECT_DOUBLE_EQ(s.max, 5.0);
}
