// calib-select from the command line: stories260K on a pool of tinystories_val paragraphs (the
// file is one `quantize --calib` accepts, and the run repeats exactly), mnist-8 on the MNIST test
// images with pseudo-labels, and bad input (N larger than the pool, an empty pool, a bad method).
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "cli_runner.h"
#include "test_support.h"

namespace edge::test {
namespace {

std::string slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

// The first `count` blank-line-separated paragraphs of a file.
std::vector<std::string> paragraphs(const std::string& text, size_t count) {
    std::vector<std::string> out;
    size_t pos = 0;
    while (pos < text.size() && out.size() < count) {
        size_t end = text.find("\n\n", pos);
        if (end == std::string::npos) end = text.size();
        std::string p = text.substr(pos, end - pos);
        pos = end + 2;
        const size_t b = p.find_first_not_of(" \t\r\n"), e = p.find_last_not_of(" \t\r\n");
        if (b != std::string::npos) out.push_back(p.substr(b, e - b + 1));
    }
    return out;
}

std::string join(const std::vector<std::string>& ps) {
    std::string s;
    for (const auto& p : ps) s += p + "\n\n";
    return s;
}

uint32_t be32(const std::string& b, size_t at) {
    return uint32_t(uint8_t(b[at])) << 24 | uint32_t(uint8_t(b[at + 1])) << 16 | uint32_t(uint8_t(b[at + 2])) << 8 |
           uint32_t(uint8_t(b[at + 3]));
}

TEST(CliCalib, Stories260KKMeansSelectionFeedsQuantize) {
    const std::string model = shared("models/stories260K/stories260K.gguf");
    const std::string val = shared("data/tinystories_val.txt");
    EDGE_REQUIRE_SHARED(model);
    EDGE_REQUIRE_SHARED(val);
    const auto dir = temp_dir("cli-calib");
    const auto pool = paragraphs(slurp(val), 120);
    ASSERT_EQ(pool.size(), 120u);
    const std::string pool_file = (dir / "pool.txt").string();
    std::ofstream(pool_file) << join(pool);

    const std::string out = (dir / "sel.txt").string();
    CliRun r = run_cli({"calib-select", model, "--pool", pool_file, "--n", "50", "--method", "kmeans", "--seed", "7",
                        "--out", out, "--json"});
    ASSERT_EQ(r.rc, 0) << r.err;
    const auto j = r.json();
    const auto idx = j["indices"].get<std::vector<int64_t>>();
    ASSERT_EQ(idx.size(), 50u);
    EXPECT_TRUE(std::is_sorted(idx.begin(), idx.end()));
    EXPECT_EQ(std::set<int64_t>(idx.begin(), idx.end()).size(), 50u);
    int64_t members = 0;
    for (int64_t s : j["cluster_sizes"].get<std::vector<int64_t>>()) {
        EXPECT_GE(s, 1);
        members += s;
    }
    EXPECT_EQ(members, 120);
    EXPECT_EQ(j["weights"].size(), 50u);
    EXPECT_GT(j["iterations"].get<int>(), 1);
    EXPECT_EQ(j["pool_size"].get<int>(), 120);
    EXPECT_TRUE(j["hardware"]["enabled"].get<bool>());
    // The file holds exactly the chosen paragraphs, in pool order; the report was written beside it.
    std::vector<std::string> chosen;
    for (int64_t i : idx) chosen.push_back(pool[size_t(i)]);
    EXPECT_EQ(slurp(out), join(chosen));
    EXPECT_EQ(nlohmann::json::parse(slurp(out + ".json")), j);

    // Same seed, same selection; random differs from it and repeats for its own seed.
    const std::string out2 = (dir / "sel2.txt").string();
    CliRun again = run_cli({"calib-select", model, "--pool", pool_file, "--n", "50", "--seed", "7", "--out", out2});
    ASSERT_EQ(again.rc, 0) << again.err;
    EXPECT_EQ(slurp(out2), slurp(out));
    EXPECT_NE(again.out.find("quantize"), std::string::npos) << again.out;  // prints the quantize flags
    CliRun rnd = run_cli({"calib-select", model, "--pool", pool_file, "--n", "50", "--method", "random", "--seed", "7",
                          "--out", (dir / "r.txt").string(), "--json"});
    CliRun rnd2 = run_cli({"calib-select", model, "--pool", pool_file, "--n", "50", "--method", "random", "--seed", "7",
                           "--out", (dir / "r2.txt").string(), "--json"});
    ASSERT_EQ(rnd.rc, 0) << rnd.err;
    ASSERT_EQ(rnd2.rc, 0) << rnd2.err;
    EXPECT_NE(rnd.json()["indices"], j["indices"]);
    EXPECT_EQ(rnd.json()["indices"], rnd2.json()["indices"]);
    EXPECT_FALSE(rnd.json().contains("cluster_sizes"));

    // quantize reads it (GPTQ needs calibration), with the flags calib-select reported.
    const std::string plan = (dir / "gptq.plan.json").string();
    std::ofstream(plan) << R"({"default": {"precision": "int4", "method": "gptq", "group_size": 32}})";
    CliRun q = run_cli({"quantize", model, "--plan", plan, "--calib", out, "--calib-sequences",
                        std::to_string(j["quantize"]["calib_sequences"].get<int>()), "--calib-len",
                        std::to_string(j["quantize"]["calib_len"].get<int>()), "--out", (dir / "m.edgeq").string()});
    ASSERT_EQ(q.rc, 0) << q.err;
    EXPECT_EQ(q.err.find("warning"), std::string::npos) << q.err;  // enough text for every sequence asked
}

// Issue 18: a configuration's calibration set is chosen as calib-select chooses it (one engine
// function, engine/calib select_paragraphs). `configs add --calib-select kmeans` records the choice
// and quantizes exactly as a plain `configs add` on the file calib-select writes for the same pool,
// size, seed and length; asking for more paragraphs than the pool holds is refused by name.
TEST(CliCalib, AConfigurationCalibratesOnWhatCalibSelectChooses) {
#ifndef EDGE_CLI_HAS_CONFIGS
    GTEST_SKIP() << "edgestudio-cli was built without the studio's item models (configs)";
#endif
    const std::string model = shared("models/stories260K/stories260K.gguf");
    const std::string val = shared("data/tinystories_val.txt");
    const std::string text = shared("data/tinystories_sample.txt");
    EDGE_REQUIRE_SHARED(model);
    EDGE_REQUIRE_SHARED(val);
    EDGE_REQUIRE_SHARED(text);
    const auto dir = temp_dir("cli-calib-config");
    const std::string pool_file = (dir / "pool.txt").string();
    std::ofstream(pool_file) << join(paragraphs(slurp(val), 120));
    const std::string plan = (dir / "awq.plan.json").string();
    std::ofstream(plan) << R"({"default": {"precision": "int4", "method": "awq", "group_size": 32}})";
    const std::string project = (dir / "p.edgeproj").string();

    CliRun picked =
        run_cli({"configs", "add",         project,   "--model",        model,    "--plan",          plan, "--text",
                 text,      "--calib",     pool_file, "--calib-select", "kmeans", "--calib-samples", "12", "--seed",
                 "7",       "--calib-len", "64",      "--parts",        "2",      "--json"});
    ASSERT_EQ(picked.rc, 0) << picked.err;
    CliRun show = run_cli({"configs", "show", project, "C1", "--json"});
    ASSERT_EQ(show.rc, 0) << show.err;
    const auto calib = show.json()["configuration"]["calibration"];
    EXPECT_EQ(calib["select"], "kmeans");
    EXPECT_EQ(calib["samples"], 12);
    EXPECT_EQ(calib["seed"], 7);
    EXPECT_NE(calib["note"].get<std::string>().find("k-means chose 12 of 120 paragraphs (seed 7)"), std::string::npos)
        << calib.dump();

    const std::string sel = (dir / "sel.txt").string();
    CliRun select = run_cli({"calib-select", model, "--pool", pool_file, "--n", "12", "--method", "kmeans", "--seed",
                             "7", "--max-tokens", "64", "--out", sel});
    ASSERT_EQ(select.rc, 0) << select.err;
    CliRun plain = run_cli(
        {"configs", "add", project, "--plan", plan, "--calib", sel, "--calib-len", "64", "--parts", "2", "--json"});
    ASSERT_EQ(plain.rc, 0) << plain.err;
    EXPECT_EQ(plain.json()["kl_mean"], picked.json()["kl_mean"]);
    EXPECT_EQ(plain.json()["ppl"], picked.json()["ppl"]);
    CliRun random = run_cli({"configs", "add", project, "--plan", plan, "--calib", pool_file, "--calib-select",
                             "random", "--calib-samples", "12", "--seed", "7", "--parts", "2", "--json"});
    ASSERT_EQ(random.rc, 0) << random.err;
    EXPECT_NE(random.json()["kl_mean"], picked.json()["kl_mean"]);

    CliRun big = run_cli({"configs", "add", project, "--plan", plan, "--calib", pool_file, "--calib-select", "random",
                          "--calib-samples", "500", "--parts", "2"});
    EXPECT_EQ(big.rc, 1);
    EXPECT_NE(big.err.find("pool.txt: 500 samples asked for, but the pool holds only 120 paragraphs"),
              std::string::npos)
        << big.err;
    CliRun list = run_cli({"configs", "list", project, "--json"});
    ASSERT_EQ(list.rc, 0) << list.err;
    EXPECT_EQ(list.json()["configurations"].size(), 3u) << "the refused run added nothing";
}

TEST(CliCalib, BadInputIsNamed) {
    const std::string model = shared("models/stories260K/stories260K.gguf");
    const std::string val = shared("data/tinystories_val.txt");
    EDGE_REQUIRE_SHARED(model);
    EDGE_REQUIRE_SHARED(val);
    const auto dir = temp_dir("cli-calib-bad");
    const std::string pool_file = (dir / "pool.txt").string();
    std::ofstream(pool_file) << join(paragraphs(slurp(val), 20));
    const std::string out = (dir / "x.txt").string();

    CliRun big = run_cli({"calib-select", model, "--pool", pool_file, "--n", "50", "--out", out});
    EXPECT_EQ(big.rc, 1);
    EXPECT_NE(big.err.find("pool.txt: 50 samples asked for, but the pool holds only 20"), std::string::npos) << big.err;
    EXPECT_FALSE(std::filesystem::exists(out));

    const std::string empty = (dir / "empty.txt").string();
    std::ofstream(empty) << "\n\n   \n\n";
    CliRun e = run_cli({"calib-select", model, "--pool", empty, "--n", "5", "--out", out});
    EXPECT_EQ(e.rc, 1);
    EXPECT_NE(e.err.find("empty.txt: the calibration pool is empty"), std::string::npos) << e.err;

    CliRun m = run_cli({"calib-select", model, "--pool", pool_file, "--n", "5", "--method", "median", "--out", out});
    EXPECT_EQ(m.rc, 1);
    EXPECT_NE(m.err.find("unknown selection method 'median'"), std::string::npos) << m.err;

    CliRun missing = run_cli({"calib-select", model, "--pool", (dir / "nope.txt").string(), "--n", "5", "--out", out});
    EXPECT_EQ(missing.rc, 1);
    EXPECT_NE(missing.err.find("nope.txt"), std::string::npos) << missing.err;

    CliRun usage = run_cli({"calib-select", model, "--n", "5", "--out", out});
    EXPECT_EQ(usage.rc, 2) << usage.err;  // --pool is required
}

TEST(CliCalib, Mnist8PseudoLabelledSelection) {
    const std::string model = shared("models/cnn/mnist-8.onnx");
    const std::string images = shared("data/t10k-images-idx3-ubyte.gz");
    const std::string labels = shared("data/t10k-labels-idx1-ubyte.gz");
    EDGE_REQUIRE_SHARED(model);
    EDGE_REQUIRE_SHARED(images);
    EDGE_REQUIRE_SHARED(labels);
    const auto dir = temp_dir("cli-calib-cnn");
    const std::string out = (dir / "sel.idx").string();
    CliRun r = run_cli({"calib-select", model, "--pool", images, "--labels", labels, "--pseudo-labels", "--n", "100",
                        "--seed", "2", "--out", out, "--json"});
    ASSERT_EQ(r.rc, 0) << r.err;
    const auto j = r.json();
    EXPECT_EQ(j["pool_size"].get<int>(), 10000);
    EXPECT_EQ(j["embedding"]["dim"].get<int>(), 256);
    const auto& pl = j["pseudo_labels"];
    EXPECT_DOUBLE_EQ(pl["threshold"].get<double>(), 0.92);
    EXPECT_EQ(pl["depth"].get<int>(), 2);  // the head of Conv, Conv, MatMul
    EXPECT_LT(pl["accepted"].get<int>(), 10000);
    EXPECT_GT(pl["accepted"].get<int>(), 9000);
    for (double c : pl["confidence"].get<std::vector<double>>()) EXPECT_GE(c, 0.92);
    EXPECT_GE(pl["agreement_with_labels"].get<double>(), 0.98);
    // Every digit is represented among 100 k-means representatives.
    const auto lab = j["labels"].get<std::vector<int>>();
    EXPECT_EQ(std::set<int>(lab.begin(), lab.end()).size(), 10u);

    // The IDX files: 100 28x28 images, 100 labels.
    const std::string idx = slurp(out);
    ASSERT_EQ(idx.size(), 16u + 100u * 784u);
    EXPECT_EQ(be32(idx, 0), 0x803u);
    EXPECT_EQ(be32(idx, 4), 100u);
    EXPECT_EQ(be32(idx, 8), 28u);
    const std::string lb = slurp(out + ".labels");
    ASSERT_EQ(lb.size(), 8u + 100u);
    EXPECT_EQ(be32(lb, 0), 0x801u);
    // The chosen images classify as their pseudo-labels (classify reads the files calib-select wrote).
    CliRun c = run_cli({"classify", model, "--images", out, "--labels", out + ".labels", "--json"});
    ASSERT_EQ(c.rc, 0) << c.err;
    EXPECT_EQ(c.json()["correct"].get<int>(), 100);

    // A threshold no image reaches is an error naming it; a per-depth override is checked.
    CliRun none = run_cli({"calib-select", model, "--pool", images, "--pseudo-labels", "--threshold", "1.5", "--n",
                           "10", "--out", (dir / "n.idx").string()});
    EXPECT_EQ(none.rc, 1);
    EXPECT_NE(none.err.find("outside [0, 1]"), std::string::npos) << none.err;
    CliRun deep = run_cli({"calib-select", model, "--pool", images, "--pseudo-labels", "--depth-threshold", "5=0.5",
                           "--n", "10", "--out", (dir / "d.idx").string()});
    EXPECT_EQ(deep.rc, 1);
    EXPECT_NE(deep.err.find("the model has 3 layers"), std::string::npos) << deep.err;
}

}  // namespace
}  // namespace edge::test
