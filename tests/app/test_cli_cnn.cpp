// classify and fold from the command line: mnist-8 top-1 through the runtime, BatchNorm folding
// of ResNet-20 and bias merging of mnist-8 (node counts, outputs unchanged), `info` on a CNN, and
// bad input (label count mismatch, an LLM given to a CNN command, a missing file).
#include <gtest/gtest.h>

#include <fstream>

#include "cli_runner.h"
#include "test_support.h"

namespace edge::test {
namespace {

TEST(CliCnn, ClassifyMnist8) {
    const std::string model = shared("models/cnn/mnist-8.onnx");
    const std::string images = shared("data/t10k-images-idx3-ubyte.gz");
    const std::string labels = shared("data/t10k-labels-idx1-ubyte.gz");
    EDGE_REQUIRE_SHARED(model);
    EDGE_REQUIRE_SHARED(images);
    EDGE_REQUIRE_SHARED(labels);
    // All 10,000 images: 98.90% (ASSETS.md), plain and with the bias Adds folded.
    CliRun r = run_cli({"classify", model, "--images", images, "--labels", labels, "--json"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.json()["images"].get<int>(), 10000);
    EXPECT_EQ(r.json()["correct"].get<int>(), 9890);
    EXPECT_EQ(r.json()["nodes"].get<int>(), 11);
    CliRun f = run_cli({"classify", model, "--images", images, "--labels", labels, "--fold", "--limit", "1000",
                        "--batch", "37", "--threads", "1", "--json"});
    ASSERT_EQ(f.rc, 0) << f.err;
    EXPECT_EQ(f.json()["images"].get<int>(), 1000);
    EXPECT_TRUE(f.json()["folded"].get<bool>());
    EXPECT_EQ(f.json()["nodes"].get<int>(), 8);
    EXPECT_EQ(f.json()["threads"].get<int>(), 1);
    EXPECT_GT(f.json()["correct"].get<int>(), 970);
    // The text form says the same.
    CliRun t = run_cli({"classify", model, "--images", images, "--labels", labels, "--limit", "500"});
    ASSERT_EQ(t.rc, 0) << t.err;
    EXPECT_NE(t.out.find("top-1"), std::string::npos) << t.out;
    EXPECT_NE(t.out.find("of 500)"), std::string::npos) << t.out;
}

TEST(CliCnn, ClassifyBadInput) {
    const std::string model = shared("models/cnn/mnist-8.onnx");
    const std::string images = shared("data/t10k-images-idx3-ubyte.gz");
    const std::string labels = shared("data/t10k-labels-idx1-ubyte.gz");
    const std::string llm = shared("models/stories260K/stories260K.gguf");
    EDGE_REQUIRE_SHARED(model);
    EDGE_REQUIRE_SHARED(images);
    EDGE_REQUIRE_SHARED(llm);
    // Labels where images should be: the file is named.
    CliRun swapped = run_cli({"classify", model, "--images", labels, "--labels", labels});
    EXPECT_EQ(swapped.rc, 1);
    EXPECT_NE(swapped.err.find("t10k-labels-idx1-ubyte.gz: not an IDX image file"), std::string::npos) << swapped.err;
    // Label count that does not match the images.
    const auto dir = temp_dir("cli-cnn-bad");
    const std::string few = (dir / "few.labels").string();
    {
        std::ofstream f(few, std::ios::binary);
        const unsigned char hdr[8] = {0, 0, 8, 1, 0, 0, 0, 3};
        f.write(reinterpret_cast<const char*>(hdr), 8);
        f.write("\x07\x02\x01", 3);
    }
    CliRun mismatch = run_cli({"classify", model, "--images", images, "--labels", few});
    EXPECT_EQ(mismatch.rc, 1);
    EXPECT_NE(mismatch.err.find("3 labels for 10000 images"), std::string::npos) << mismatch.err;
    // An LLM is not a CNN.
    CliRun notcnn = run_cli({"classify", llm, "--images", images, "--labels", labels});
    EXPECT_EQ(notcnn.rc, 1);
    EXPECT_NE(notcnn.err.find("not a CNN"), std::string::npos) << notcnn.err;
    CliRun missing = run_cli({"fold", (dir / "nope.onnx").string()});
    EXPECT_EQ(missing.rc, 1);
    EXPECT_NE(missing.err.find("nope.onnx"), std::string::npos) << missing.err;
    CliRun usage = run_cli({"classify", model, "--images", images});
    EXPECT_EQ(usage.rc, 2) << usage.err;  // --labels is required
}

TEST(CliCnn, FoldResNet20AndMnist8) {
    const std::string resnet = shared("models/cnn/resnet20_cifar10.safetensors");
    const std::string mnist = shared("models/cnn/mnist-8.onnx");
    EDGE_REQUIRE_SHARED(resnet);
    EDGE_REQUIRE_SHARED(mnist);
    CliRun r = run_cli({"fold", resnet, "--json"});
    ASSERT_EQ(r.rc, 0) << r.err;
    const auto j = r.json();
    EXPECT_EQ(j["nodes_before"]["total"].get<int>(), 72);
    EXPECT_EQ(j["nodes_after"]["total"].get<int>(), 53);
    EXPECT_EQ(j["batchnorms_folded"].get<int>(), 19);
    EXPECT_EQ(j["nodes_before"]["by_type"]["BatchNorm"].get<int>(), 19);
    EXPECT_FALSE(j["nodes_after"]["by_type"].contains("BatchNorm"));
    EXPECT_LT(j["parameters_after"].get<int64_t>(), j["parameters_before"].get<int64_t>());
    EXPECT_LT(j["max_relative_difference"].get<double>(), 1e-5);

    CliRun m = run_cli({"fold", mnist, "--json", "--samples", "2"});
    ASSERT_EQ(m.rc, 0) << m.err;
    EXPECT_EQ(m.json()["nodes_before"]["total"].get<int>(), 11);
    EXPECT_EQ(m.json()["nodes_after"]["total"].get<int>(), 8);
    EXPECT_EQ(m.json()["adds_merged"].get<int>(), 3);
    EXPECT_EQ(m.json()["parameters_after"], m.json()["parameters_before"]);
    EXPECT_EQ(m.json()["random_inputs"].get<int>(), 2);
    EXPECT_LT(m.json()["max_relative_difference"].get<double>(), 1e-5);

    CliRun t = run_cli({"fold", resnet});
    ASSERT_EQ(t.rc, 0) << t.err;
    EXPECT_NE(t.out.find("19 BatchNorm"), std::string::npos) << t.out;

    CliRun info = run_cli({"info", mnist, "--json"});
    ASSERT_EQ(info.rc, 0) << info.err;
    EXPECT_NE(info.out.find("Plus214_Output_0"), std::string::npos) << info.out;
}

}  // namespace
}  // namespace edge::test
