// ONNX import: mnist-8's graph, the unsupported-op error, malformed input, a hand-built model
// with Gemm/BatchNormalization/Flatten/Pad/AveragePool checked against values computed by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "engine/model/cnn_ir.h"
#include "engine/model/loader.h"
#include "engine/model/onnx.h"
#include "engine/runtime/cnn/cnn.h"
#include "test_support.h"

namespace {

// A tiny protobuf encoder, enough to build ONNX ModelProtos in tests.
struct Pb {
    std::string b;
    void varint(uint64_t v) {
        while (v >= 0x80) {
            b += char(uint8_t(v) | 0x80);
            v >>= 7;
        }
        b += char(v);
    }
    Pb& key(uint32_t field, uint32_t wire) {
        varint(uint64_t(field) << 3 | wire);
        return *this;
    }
    Pb& i(uint32_t field, int64_t v) {
        key(field, 0);
        varint(uint64_t(v));
        return *this;
    }
    Pb& s(uint32_t field, const std::string& v) {
        key(field, 2);
        varint(v.size());
        b += v;
        return *this;
    }
    Pb& m(uint32_t field, const Pb& v) { return s(field, v.b); }
    Pb& f(uint32_t field, float v) {
        key(field, 5);
        char c[4];
        std::memcpy(c, &v, 4);
        b.append(c, 4);
        return *this;
    }
};

Pb tensor(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& v) {
    Pb t;
    for (int64_t d : dims) t.i(1, d);
    t.i(2, 1);
    std::string raw(v.size() * 4, '\0');
    if (!v.empty()) std::memcpy(raw.data(), v.data(), raw.size());  // an empty vector's data() may be null
    t.s(8, name).s(9, raw);
    return t;
}
Pb int_tensor(const std::string& name, const std::vector<int64_t>& dims, const std::vector<int64_t>& v) {
    Pb t;
    for (int64_t d : dims) t.i(1, d);
    t.i(2, 7);
    for (int64_t x : v) t.i(7, x);  // unpacked int64_data
    t.s(8, name);
    return t;
}
Pb attr_ints(const std::string& name, const std::vector<int64_t>& v) {
    Pb a;
    a.s(1, name);
    for (int64_t x : v) a.i(8, x);
    return a;
}
Pb attr_int(const std::string& name, int64_t v) { return Pb().s(1, name).i(3, v); }
Pb attr_float(const std::string& name, float v) { return Pb().s(1, name).f(2, v); }
Pb node(const std::string& op, const std::vector<std::string>& in, const std::vector<std::string>& out,
        const std::string& name, const std::vector<Pb>& attrs = {}) {
    Pb n;
    for (const auto& x : in) n.s(1, x);
    for (const auto& x : out) n.s(2, x);
    n.s(3, name).s(4, op);
    for (const Pb& a : attrs) n.m(5, a);
    return n;
}
Pb value_info(const std::string& name, const std::vector<int64_t>& dims) {
    Pb shape;
    for (int64_t d : dims) shape.m(1, Pb().i(1, d));
    Pb tt;
    tt.i(1, 1).m(2, shape);
    return Pb().s(1, name).m(2, Pb().m(1, tt));
}
std::string model(const std::vector<Pb>& nodes, const std::vector<Pb>& inits, const Pb& in, const Pb& out,
                  int64_t opset = 13) {
    Pb g;
    for (const Pb& n : nodes) g.m(1, n);
    g.s(2, "test");
    for (const Pb& t : inits) g.m(5, t);
    g.m(11, in).m(12, out);
    Pb mp;
    mp.i(1, 7).s(2, "edge-test").m(7, g).m(8, Pb().s(1, "").i(2, opset));
    return mp.b;
}
edge::Result<edge::model::Model> parse(const std::string& bytes) {
    return edge::model::parse_onnx_model(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "test.onnx");
}

}  // namespace

TEST(Onnx, Mnist8GraphImports) {
    const std::string path = edge::test::shared("models/cnn/mnist-8.onnx");
    EDGE_REQUIRE_SHARED(path);
    auto m = edge::model::load_model(path);  // through the common loader
    ASSERT_TRUE(m.ok()) << m.message();
    EXPECT_EQ(m->architecture, "cnn");
    EXPECT_EQ(m->source_format, "onnx");
    auto shape = edge::model::cnn_input_shape(m.value());
    ASSERT_TRUE(shape.ok()) << shape.message();
    EXPECT_EQ(shape.value(), (std::vector<int64_t>{1, 1, 28, 28}));
    EXPECT_EQ(m->graph.inputs, std::vector<std::string>{"Input3"});
    EXPECT_EQ(m->graph.outputs, std::vector<std::string>{"Plus214_Output_0"});
    // Conv, Add, Relu, MaxPool, Conv, Add, Relu, MaxPool, Reshape, Linear (MatMul), Add: the
    // weight's Reshape is folded into the constant.
    const auto counts = edge::model::count_nodes(m->graph);
    EXPECT_EQ(counts.total, 11) << counts.text();
    EXPECT_EQ(m->parameter_count(), 5994);  // ASSETS.md
    const edge::Tensor* w = m->find("Convolution28.weight");
    ASSERT_NE(w, nullptr);
    EXPECT_EQ(w->shape, (std::vector<int64_t>{8, 1, 5, 5}));
    const edge::Tensor* fc = m->find("Times212.weight");
    ASSERT_NE(fc, nullptr);
    EXPECT_EQ(fc->shape, (std::vector<int64_t>{10, 256}));
    const auto layers = edge::model::list_layers(m.value());
    ASSERT_EQ(layers.size(), 3u);
    EXPECT_EQ(layers[0].name, "Convolution28");
    EXPECT_EQ(layers[2].name, "Times212");
}

TEST(Onnx, UnsupportedOpsAreListedByNameInOneError) {
    const std::string bytes =
        model({node("Conv", {"x", "w"}, {"c"}, "conv0"), node("LSTM", {"c"}, {"l"}, "lstm0"),
               node("Resize", {"l"}, {"r1"}, "up1"), node("Resize", {"r1"}, {"r2"}, "up2"),
               node("Relu", {"r2"}, {"y"}, "relu0")},
              {tensor("w", {1, 1, 1, 1}, {1.0f})}, value_info("x", {1, 1, 4, 4}), value_info("y", {1, 1, 4, 4}));
    auto m = parse(bytes);
    ASSERT_TRUE(edge::test::fails_with(m, {"test.onnx", "unsupported ONNX ops: LSTM (lstm0); Resize (up1, up2)"}));
    const std::string& msg = m.message();
    EXPECT_NE(msg.find("test.onnx"), std::string::npos) << msg;
    EXPECT_NE(msg.find("unsupported ONNX ops"), std::string::npos) << msg;
    EXPECT_NE(msg.find("LSTM (lstm0)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("Resize (up1, up2)"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("Conv ("), std::string::npos) << msg;  // supported ones are not listed
}

TEST(Onnx, MalformedInputIsAnErrorNamingTheFile) {
    const std::string path = edge::test::shared("models/cnn/mnist-8.onnx");
    EDGE_REQUIRE_SHARED(path);
    std::string bytes;
    {
        FILE* f = std::fopen(path.c_str(), "rb");
        ASSERT_NE(f, nullptr);
        char buf[4096];
        size_t got;
        while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) bytes.append(buf, got);
        std::fclose(f);
    }
    // Every truncation is an error or a (smaller) model, never a crash.
    int errors = 0;
    for (size_t cut = 0; cut < bytes.size(); cut += 97) {
        auto m = parse(bytes.substr(0, cut));
        if (!m.ok()) {
            ++errors;
            EXPECT_NE(m.message().find("test.onnx"), std::string::npos) << m.message();
        }
    }
    EXPECT_GT(errors, 200);
    auto junk = parse(std::string("\x0a\xff\xff\xff\x0f", 5));
    ASSERT_FALSE(junk.ok());
    EXPECT_NE(junk.message().find("malformed ONNX"), std::string::npos) << junk.message();
    auto not_onnx = parse("hello");
    ASSERT_TRUE(edge::test::fails_with(not_onnx, {"test.onnx", "malformed ONNX model", "unsupported wire type 4"}));
}

TEST(Onnx, GemmBatchNormPadPoolFlattenComputeWhatTheyShould) {
    // x [1,2,2,2] -> BN -> Pad(1 on each spatial side) -> AveragePool 2x2 s2 (count_include_pad=0)
    //   -> Flatten -> Gemm(transB=1, alpha 2, beta 0.5) -> Relu -> y [1,2]
    const std::vector<float> scale = {2.0f, 0.5f}, bias = {1.0f, -1.0f}, mean = {0.5f, 1.0f}, var = {4.0f, 0.25f};
    std::vector<float> gemm_w(2 * 8);
    for (size_t i = 0; i < gemm_w.size(); ++i) gemm_w[i] = float(int(i % 5) - 2) * 0.25f;
    const std::vector<float> gemm_c = {0.5f, -4.0f};
    const std::string bytes = model(
        {node("BatchNormalization", {"x", "s", "b", "m", "v"}, {"bn"}, "bn0", {attr_float("epsilon", 0.0f)}),
         node("Pad", {"bn", "pads"}, {"p"}, "pad0"),
         node("AveragePool", {"p"}, {"a"}, "pool0", {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {2, 2})}),
         node("Flatten", {"a"}, {"f"}, "flat0", {attr_int("axis", 1)}),
         node("Gemm", {"f", "gw", "gc"}, {"g"}, "fc0",
              {attr_int("transB", 1), attr_float("alpha", 2.0f), attr_float("beta", 0.5f)}),
         node("Relu", {"g"}, {"y"}, "relu0")},
        {tensor("s", {2}, scale), tensor("b", {2}, bias), tensor("m", {2}, mean), tensor("v", {2}, var),
         int_tensor("pads", {8}, {0, 0, 1, 1, 0, 0, 1, 1}), tensor("gw", {2, 8}, gemm_w), tensor("gc", {2}, gemm_c)},
        value_info("x", {1, 2, 2, 2}), value_info("y", {1, 2}));
    auto m = parse(bytes);
    ASSERT_TRUE(m.ok()) << m.message();
    auto exec = edge::runtime::CnnExecutor::create(m.value(), 1);
    ASSERT_TRUE(exec.ok()) << exec.message();
    edge::runtime::Activation in{{1, 2, 2, 2}, {1, 2, 3, 4, -1, 0, 1, 2}};
    auto out = exec.value()->run(in);
    ASSERT_TRUE(out.ok()) << out.message();
    ASSERT_EQ(out->shape, (std::vector<int64_t>{1, 2}));
    // By hand: BN, then pad 1 -> 4x4 planes; 2x2/2 average pool without the pad cells = each
    // window holds exactly one real pixel (the corner), so the pool returns BN(x) itself.
    std::vector<double> feat(8);
    for (int c = 0; c < 2; ++c)
        for (int k = 0; k < 4; ++k)
            feat[size_t(c) * 4 + size_t(k)] = scale[size_t(c)] *
                                                  (in.data[size_t(c) * 4 + size_t(k)] - mean[size_t(c)]) /
                                                  std::sqrt(double(var[size_t(c)])) +
                                              bias[size_t(c)];
    for (int o = 0; o < 2; ++o) {
        double acc = 0.5 * gemm_c[size_t(o)];
        for (int k = 0; k < 8; ++k) acc += 2.0 * gemm_w[size_t(o) * 8 + size_t(k)] * feat[size_t(k)];
        EXPECT_NEAR(out->data[size_t(o)], std::max(acc, 0.0), 1e-5) << "output " << o;
    }
}

TEST(Onnx, WeightOperandThatIsAnActivationIsRefused) {
    const std::string bytes = model({node("Relu", {"x"}, {"r"}, "relu0"), node("Conv", {"x", "r"}, {"y"}, "conv0")}, {},
                                    value_info("x", {1, 1, 4, 4}), value_info("y", {1, 1, 4, 4}));
    auto m = parse(bytes);
    ASSERT_FALSE(m.ok());
    EXPECT_NE(m.message().find("conv0"), std::string::npos) << m.message();
    EXPECT_NE(m.message().find("initializer"), std::string::npos) << m.message();
}

// Regression (issue 21): a stride of 0 used to reach the executor and die of SIGFPE there.
TEST(Onnx, ZeroOrNegativeWindowAttributesAreRefusedByTheImporter) {
    struct Case {
        const char* op;
        std::vector<Pb> attrs;
        const char* attr;
    };
    const std::vector<Case> cases = {
        {"Conv", {attr_ints("strides", {0, 1})}, "strides"},
        {"Conv", {attr_ints("dilations", {1, 0})}, "dilations"},
        {"Conv", {attr_ints("pads", {0, -1, 0, 0})}, "pads"},
        {"MaxPool", {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {0, 0})}, "strides"},
        {"MaxPool", {attr_ints("kernel_shape", {0, 2})}, "kernel"},
    };
    for (const Case& c : cases) {
        const bool conv = std::string(c.op) == "Conv";
        const std::string bytes =
            model({node(c.op, conv ? std::vector<std::string>{"x", "w"} : std::vector<std::string>{"x"}, {"y"}, "win0",
                        c.attrs)},
                  {tensor("w", {1, 1, 1, 1}, {1.0f})}, value_info("x", {1, 1, 4, 4}), value_info("y", {1, 1, 4, 4}));
        EXPECT_TRUE(edge::test::fails_with(parse(bytes), {"test.onnx", "win0", c.attr, "out of range"})) << c.op;
    }
}

// The executor guards the same values for graphs that did not come through the ONNX importer.
TEST(Onnx, ExecutorRefusesAZeroStrideInsteadOfDividingByIt) {
    const std::string bytes = model(
        {node("MaxPool", {"x"}, {"y"}, "pool0", {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {2, 2})})}, {},
        value_info("x", {1, 1, 4, 4}), value_info("y", {1, 1, 2, 2}));
    auto m = parse(bytes);
    ASSERT_TRUE(m.ok()) << m.message();
    for (auto& op : m.value().graph.ops) op.attrs["strides"] = {0, 2};
    auto exec = edge::runtime::CnnExecutor::create(m.value(), 1);
    ASSERT_TRUE(exec.ok()) << exec.message();
    edge::runtime::Activation in{{1, 1, 4, 4}, std::vector<float>(16, 1.0f)};
    EXPECT_TRUE(edge::test::fails_with(exec.value()->run(in), {"pool0", "strides", "not an integer in [1"}));
}

// Regression (fuzz_onnx, UBSan): dimensions each under 2^31 whose product overflows int64 were
// multiplied unchecked; the count now saturates and the tensor is refused as too large.
TEST(Onnx, DimensionsWhoseProductOverflowsAreRefused) {
    Pb t;
    for (int64_t d : {int64_t(1) << 30, int64_t(1) << 30, int64_t(110)}) t.i(1, d);
    t.i(2, 1);
    t.s(8, "huge");
    const std::string bytes =
        model({node("Relu", {"x"}, {"y"}, "relu0")}, {t}, value_info("x", {1, 1, 4, 4}), value_info("y", {1, 1, 4, 4}));
    EXPECT_TRUE(edge::test::fails_with(parse(bytes), {"test.onnx", "huge", "too large"}));
}

TEST(Onnx, WeightsWithoutElementsAreRefusedNamingTheNode) {
    // Found by fuzz_onnx in its core-hour run: a Conv weight with a zero dimension reached a
    // memcpy from the empty tensor's null data (UBSan). No layer can use a weight without elements.
    const auto in = value_info("x", {1, 1, 4, 4});
    const auto out = value_info("y", {1, 1, 4, 4});
    EXPECT_TRUE(edge::test::fails_with(
        parse(model({node("Conv", {"x", "w"}, {"y"}, "conv0")}, {tensor("w", {1, 0, 3, 3}, {})}, in, out)),
        {"test.onnx", "node 'conv0' (Conv)", "its weight has no elements", "[1x0x3x3]"}));
    EXPECT_TRUE(
        edge::test::fails_with(parse(model({node("Conv", {"x", "w", "b"}, {"y"}, "conv1")},
                                           {tensor("w", {0, 1, 3, 3}, {}), tensor("b", {0}, {})}, in, out)),
                               {"test.onnx", "node 'conv1' (Conv)", "its weight has no elements", "[0x1x3x3]"}));
    EXPECT_TRUE(edge::test::fails_with(
        parse(model({node("Flatten", {"x"}, {"f"}, "flat0"), node("MatMul", {"f", "w"}, {"y"}, "mm0")},
                    {tensor("w", {16, 0}, {})}, in, value_info("y", {1, 4}))),
        {"test.onnx", "node 'mm0' (MatMul)", "its weight has no elements"}));
    EXPECT_TRUE(edge::test::fails_with(
        parse(model({node("BatchNormalization", {"x", "s", "b", "m", "v"}, {"y"}, "bn0")},
                    {tensor("s", {0}, {}), tensor("b", {0}, {}), tensor("m", {0}, {}), tensor("v", {0}, {})}, in, out)),
        {"test.onnx", "node 'bn0' (BatchNormalization)", "its scale has no elements", "[0]"}));
    EXPECT_TRUE(
        edge::test::fails_with(parse(model({node("Add", {"x", "c"}, {"y"}, "add0")}, {tensor("c", {0}, {})}, in, out)),
                               {"test.onnx", "node 'add0' (Add)", "its const has no elements", "[0]"}));
}
