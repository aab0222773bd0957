// TorchScript import (engine/analysis/torchscript_cnn.h). The fixture is assembled here: a
// ResNet-20 torch::jit::Module with nested submodules holding the weights of
// ../shared/models/cnn/resnet20_cifar10.safetensors and a forward defined in TorchScript source,
// saved to a .pt file and imported back; the import must run like the safetensors model does
// through the runtime. The TorchScript source is written out here by hand (not by our exporter),
// as a PyTorch user would script it.
#include <gtest/gtest.h>

#include <torch/script.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>

#include "engine/analysis/torch_cnn.h"
#include "engine/analysis/torchscript_cnn.h"
#include "engine/model/cnn_ir.h"
#include "engine/model/onnx.h"
#include "engine/runtime/cnn/cnn.h"
#include "test_support.h"

namespace {

torch::Tensor copy_of(const edge::model::Model& m, const std::string& name) {
    const edge::Tensor* t = m.find(name);
    EXPECT_NE(t, nullptr) << name;
    return torch::from_blob(const_cast<float*>(t->f32()), t->shape, torch::kFloat32).clone();
}

int mangle = 0;
torch::jit::Module child(torch::jit::Module& parent, const std::string& name,
                         const std::shared_ptr<torch::jit::CompilationUnit>& cu) {
    torch::jit::Module c(c10::QualifiedName("__torch__.fixture.Sub" + std::to_string(mangle++)), cu, true);
    parent.register_module(name, c);
    return c;
}

// conv (no bias) + BatchNorm modules named like torchvision / akamaster: <prefix>conv1, bn1, ...
void conv_bn(const edge::model::Model& src, torch::jit::Module& parent, const std::string& prefix,
             const std::string& conv, const std::string& bn, const std::shared_ptr<torch::jit::CompilationUnit>& cu) {
    auto c = child(parent, conv, cu);
    c.register_parameter("weight", copy_of(src, prefix + conv + ".weight"), false);
    auto b = child(parent, bn, cu);
    b.register_parameter("weight", copy_of(src, prefix + bn + ".scale"), false);
    b.register_parameter("bias", copy_of(src, prefix + bn + ".bias"), false);
    b.register_buffer("running_mean", copy_of(src, prefix + bn + ".mean"));
    b.register_buffer("running_var", copy_of(src, prefix + bn + ".var"));
}

// torch.batch_norm of `x` by BatchNorm module `name` of block `blk`.
std::string batch_norm(const std::string& x, const std::string& blk, const std::string& name) {
    return "torch.batch_norm(" + x + ", " + blk + "." + name + ".weight, " + blk + "." + name + ".bias, " + blk + "." +
           name + ".running_mean, " + blk + "." + name + ".running_var, False, 0.1, 1e-05, False)";
}

// The forward lines of basic block `b` of stage `s` (0-based) with `planes` channels: two conv + bn,
// and the shortcut (option A: subsample and zero channels where the block downsamples).
std::string block_forward(int s, int b, int planes) {
    const std::string blk = "getattr(self.layer" + std::to_string(s + 1) + ", \"" + std::to_string(b) + "\")";
    const std::string stride = s > 0 && b == 0 ? "2" : "1";
    std::string fwd = "    h = torch.relu(" +
                      batch_norm("torch.conv2d(out, " + blk + ".conv1.weight, None, [" + stride + ", " + stride +
                                     "], [1, 1], [1, 1], 1)",
                                 blk, "bn1") +
                      ")\n";
    fwd += "    h = " +
           batch_norm("torch.conv2d(h, " + blk + ".conv2.weight, None, [1, 1], [1, 1], [1, 1], 1)", blk, "bn2") + "\n";
    if (s > 0 && b == 0) {
        const std::string p = std::to_string(planes / 4);
        fwd +=
            "    sc = torch.constant_pad_nd(torch.max_pool2d(out, [1, 1], [2, 2], [0, 0], [1, 1], False), [0, "
            "0, 0, 0, " +
            p + ", " + p + "], 0.0)\n";
    } else {
        fwd += "    sc = out\n";
    }
    fwd += "    out = torch.relu(h + sc)\n";
    return fwd;
}

// The ResNet-20 TorchScript module, saved to `path`.
void write_resnet20_pt(const edge::model::Model& src, const std::string& path) {
    auto cu = std::make_shared<torch::jit::CompilationUnit>();
    torch::jit::Module root(c10::QualifiedName("__torch__.fixture.ResNet20"), cu, true);
    conv_bn(src, root, "", "conv1", "bn1", cu);
    std::string fwd =
        "def forward(self, x):\n"
        "    out = torch.relu(torch.batch_norm(torch.conv2d(x, self.conv1.weight, None, [1, 1], [1, 1], [1, 1], 1),"
        " self.bn1.weight, self.bn1.bias, self.bn1.running_mean, self.bn1.running_var, False, 0.1, 1e-05, False))\n";
    const int planes[3] = {16, 32, 64};
    for (int s = 0; s < 3; ++s) {
        auto layer = child(root, "layer" + std::to_string(s + 1), cu);
        for (int b = 0; b < 3; ++b) {
            const std::string prefix = "layer" + std::to_string(s + 1) + "." + std::to_string(b) + ".";
            auto block = child(layer, std::to_string(b), cu);
            conv_bn(src, block, prefix, "conv1", "bn1", cu);
            conv_bn(src, block, prefix, "conv2", "bn2", cu);
            fwd += block_forward(s, b, planes[s]);
        }
    }
    auto fc = child(root, "linear", cu);
    fc.register_parameter("weight", copy_of(src, "linear.weight"), false);
    fc.register_parameter("bias", copy_of(src, "linear.bias"), false);
    fwd += "    out = torch.flatten(torch.adaptive_avg_pool2d(out, [1, 1]), 1)\n";
    fwd += "    return torch.linear(out, self.linear.weight, self.linear.bias)\n";
    root.define(fwd);
    root.save(path);
}

edge::runtime::Activation random_input(const std::vector<int64_t>& shape, uint64_t seed) {
    edge::runtime::Activation a;
    a.shape = shape;
    a.data.resize(size_t(a.numel()));
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (float& v : a.data) v = nd(rng);
    return a;
}

double rel_err(const std::vector<float>& a, const std::vector<float>& b) {
    double num = 0, den = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        num = std::max(num, std::fabs(double(a[i]) - double(b[i])));
        den = std::max(den, std::fabs(double(b[i])));
    }
    return num / std::max(den, 1e-30);
}

}  // namespace

TEST(TorchScript, ResNet20ImportRunsLikeTheSafetensors) {
    const std::string st = edge::test::shared("models/cnn/resnet20_cifar10.safetensors");
    EDGE_REQUIRE_SHARED(st);
    auto ref = edge::model::build_resnet20_cifar(st);
    ASSERT_TRUE(ref.ok()) << ref.message();
    const std::string pt = (edge::test::temp_dir("ts") / "resnet20.pt").string();
    write_resnet20_pt(ref.value(), pt);
    auto m = edge::analysis::load_torchscript_cnn(pt, {1, 3, 32, 32});
    ASSERT_TRUE(m.ok()) << m.message();
    EXPECT_EQ(m->source_format, "torchscript");
    EXPECT_EQ(m->parameter_count(), ref->parameter_count()) << edge::model::count_nodes(m->graph).text();
    for (const edge::model::Op& op : m->graph.ops) {
        std::string w;
        for (const auto& x : op.weights) w += x + " ";
        std::string at;
        for (const auto& [k, v] : op.attrs) {
            at += k + "=";
            for (double d : v) at += std::to_string(int(d)) + ",";
            at += " ";
        }
        if (m->parameter_count() != ref->parameter_count())
            std::printf("  %s %s [%s] %s\n", edge::model::op_type_name(op.type), op.name.c_str(), w.c_str(),
                        at.c_str());
    }
    // Every tensor of the safetensors model arrives under its name, bit for bit.
    for (const edge::Tensor& t : ref->tensors) {
        const edge::Tensor* u = m->find(t.name);
        ASSERT_NE(u, nullptr) << t.name << " missing from the import";
        ASSERT_EQ(u->shape, t.shape) << t.name;
        EXPECT_EQ(0, std::memcmp(u->f32(), t.f32(), size_t(t.numel()) * sizeof(float))) << t.name;
    }
    const auto counts = edge::model::count_nodes(m->graph);
    std::map<std::string, int> by(counts.by_type.begin(), counts.by_type.end());
    EXPECT_EQ(by["Conv2d"], 19);
    EXPECT_EQ(by["BatchNorm"], 19);
    EXPECT_EQ(by["Add"], 9);
    EXPECT_EQ(by["Pad"], 2);
    EXPECT_EQ(by["Linear"], 1);
    // Layer names come from the module paths and match the safetensors names.
    ASSERT_NE(m->find("layer2.0.conv1.weight"), nullptr);
    ASSERT_NE(m->find("layer3.2.bn2.var"), nullptr);
    const edge::Tensor* a = m->find("layer3.2.conv2.weight");
    const edge::Tensor* b = ref->find("layer3.2.conv2.weight");
    ASSERT_TRUE(a && b);
    EXPECT_EQ(0, std::memcmp(a->f32(), b->f32(), size_t(a->numel()) * sizeof(float)));
    // Same outputs as the safetensors model through the runtime.
    const auto in = random_input({4, 3, 32, 32}, 5);
    auto e1 = edge::runtime::CnnExecutor::create(m.value());
    ASSERT_TRUE(e1.ok()) << e1.message();
    auto e2 = edge::runtime::CnnExecutor::create(ref.value());
    ASSERT_TRUE(e2.ok()) << e2.message();
    auto y1 = (*e1)->run(in);
    auto y2 = (*e2)->run(in);
    ASSERT_TRUE(y1.ok()) << y1.message();
    ASSERT_TRUE(y2.ok()) << y2.message();
    ASSERT_EQ(y1->shape, (std::vector<int64_t>{4, 10}));
    if (rel_err(y1->data, y2->data) > 1e-5)
        for (const edge::model::Op& op : m->graph.ops) {
            std::string at;
            for (const auto& [k, v] : op.attrs) {
                at += k + "=";
                for (double d : v) at += std::to_string(int(d)) + ",";
                at += " ";
            }
            std::printf("  %s %s %s\n", edge::model::op_type_name(op.type), op.name.c_str(), at.c_str());
        }
    EXPECT_LT(rel_err(y1->data, y2->data), 1e-5);
    // And the same as LibTorch running the saved module itself.
    auto mod = torch::jit::load(pt);
    auto x = torch::from_blob(const_cast<float*>(in.data.data()), in.shape, torch::kFloat32);
    auto y = mod.forward({x}).toTensor().contiguous();
    std::vector<float> yt(y.data_ptr<float>(), y.data_ptr<float>() + y.numel());
    EXPECT_LT(rel_err(y1->data, yt), 1e-4);
}

TEST(TorchScript, UnsupportedOpsAreListedByName) {
    auto cu = std::make_shared<torch::jit::CompilationUnit>();
    torch::jit::Module root(c10::QualifiedName("__torch__.fixture.Odd"), cu, true);
    root.register_parameter("w", torch::ones({4, 1, 3, 3}), false);
    root.define(
        "def forward(self, x):\n"
        "    y = torch.sigmoid(torch.conv2d(x, self.w, None, [1, 1], [1, 1], [1, 1], 1))\n"
        "    return torch.tanh(torch.gelu(y))\n");
    const std::string pt = (edge::test::temp_dir("ts") / "odd.pt").string();
    root.save(pt);
    auto m = edge::analysis::load_torchscript_cnn(pt, {1, 1, 8, 8});
    ASSERT_FALSE(m.ok());
    for (const char* name : {"odd.pt", "aten::sigmoid", "aten::tanh", "aten::gelu"})
        EXPECT_NE(m.message().find(name), std::string::npos) << name << " in: " << m.message();
    // Not a TorchScript file, and no input shape: errors naming the file.
    const std::string junk = (edge::test::temp_dir("ts") / "junk.pt").string();
    std::ofstream(junk) << "not a zip";
    auto j = edge::analysis::load_torchscript_cnn(junk, {1, 1, 8, 8});
    ASSERT_FALSE(j.ok());
    EXPECT_NE(j.message().find("junk.pt"), std::string::npos) << j.message();
    auto ns = edge::analysis::load_torchscript_cnn(pt);
    ASSERT_FALSE(ns.ok());
    EXPECT_NE(ns.message().find("input shape"), std::string::npos) << ns.message();
}

TEST(TorchScript, Mnist8RoundTripsThroughOurExporter) {
    // ONNX -> IR -> TorchScript (save_torchscript_cnn) -> IR: SAME_UPPER conv padding, the
    // Reshape with a fixed batch 1, constant Adds. The input shape travels in the module.
    const std::string path = edge::test::shared("models/cnn/mnist-8.onnx");
    EDGE_REQUIRE_SHARED(path);
    auto m = edge::model::load_onnx_model(path);
    ASSERT_TRUE(m.ok()) << m.message();
    const std::string pt = (edge::test::temp_dir("ts") / "mnist8.pt").string();
    auto s = edge::analysis::save_torchscript_cnn(m.value(), pt);
    ASSERT_TRUE(s.ok()) << s.message();
    auto back = edge::analysis::load_torchscript_cnn(pt);
    ASSERT_TRUE(back.ok()) << back.message();
    EXPECT_EQ(edge::model::cnn_input_shape(back.value()).value(), (std::vector<int64_t>{1, 1, 28, 28}));
    const auto in = random_input({8, 1, 28, 28}, 9);
    auto e1 = edge::runtime::CnnExecutor::create(m.value());
    auto e2 = edge::runtime::CnnExecutor::create(back.value());
    ASSERT_TRUE(e1.ok() && e2.ok());
    auto y1 = (*e1)->run(in);
    auto y2 = (*e2)->run(in);
    ASSERT_TRUE(y1.ok()) << y1.message();
    ASSERT_TRUE(y2.ok()) << y2.message();
    ASSERT_EQ(y1->shape, y2->shape);
    EXPECT_LT(rel_err(y2->data, y1->data), 1e-5);
}
