// Cross-backend: CPU reference (LlamaCpu) vs CPU backend vs CUDA backend, whole model, fused plan
// and unfused plan (every op its own node), by normalised error. The CUDA cases skip with the
// device probe's reason when no device answers (or CUDA was not built); kernel-by-kernel CUDA
// checks are in tests/gpu (edge-gpu-check), which builds without GTest on a GPU machine.
#include <gtest/gtest.h>

#include "backend_test_util.h"
#include "engine/compile/compile.h"
#include "engine/model/loader.h"
#include "engine/quant/apply.h"
#include "engine/runtime/cpu/cpu_backend.h"
#include "engine/runtime/cpu/qkernels.h"
#include "engine/runtime/device.h"
#include "test_support.h"

using edge::model::build_llama_graph;
using edge::model::Graph;
using edge::model::load_model;
using edge::model::Model;
using edge::runtime::BackendOptions;
using edge::runtime::CpuBackend;
using edge::runtime::DeviceReport;
using edge::runtime::LlamaCpu;
using edge::runtime::make_backend;
using edge::runtime::probe_devices;
using edge::runtime::RuntimeOptions;

using namespace edge;
using namespace edge::compile;
using edge::test::rel_err;

namespace {

std::string stories_path() { return edge::test::shared("models/stories260K/stories260K.gguf"); }

// The same model with every quantized matrix dequantized to F32: what the CUDA kernels compute
// (FP32 activations times the dequantized weights); the CPU's quantized matmuls quantize the
// activations to int8 as well, so CUDA is compared with this one.
std::shared_ptr<const Model> dequantized(const Model& m) {
    auto d = std::make_shared<Model>(m);
    for (Tensor& t : d->tensors)
        if (t.type != DType::F32) {
            const std::vector<float> f = runtime::qkernels::dequantize(t);
            Tensor n = Tensor::alloc(t.name, DType::F32, t.shape);
            std::copy(f.begin(), f.end(), n.f32_mut());
            t = std::move(n);
        }
    return d;
}

ExecProgram unfused_plan(const Model& m, int max_seq) {
    const Graph g = build_llama_graph(m.config);
    ExecProgram p;
    p.nodes = unfused_nodes(g);
    p.decode = plan_memory(p.nodes, g, m.config, 1, max_seq).value();
    p.prefill = plan_memory(p.nodes, g, m.config, 4, max_seq).value();
    return p;
}

struct Case {
    const char* name;
    std::optional<quant::Precision> precision;
    bool fused;
};

class CrossBackend : public ::testing::TestWithParam<Case> {};

}  // namespace

TEST_P(CrossBackend, CpuReferenceCpuBackendCuda) {
    EDGE_REQUIRE_SHARED(stories_path());
    const Case c = GetParam();
    auto loaded = load_model(stories_path());
    ASSERT_TRUE(loaded.ok()) << loaded.message();
    std::shared_ptr<const Model> model = std::make_shared<const Model>(std::move(loaded).value());
    if (c.precision) {
        auto q = quant::apply_plan(*model, quant::uniform_plan(*c.precision), nullptr);
        ASSERT_TRUE(q.ok()) << q.message();
        model = std::make_shared<const Model>(std::move(q.value().model));
    }
    ExecProgram plan;
    if (c.fused) {
        auto p = build_exec_program(*model, 4, 32);
        ASSERT_TRUE(p.ok()) << p.message();
        plan = *p;
    } else {
        plan = unfused_plan(*model, 32);
    }
    auto ref_rt = LlamaCpu::create(model, RuntimeOptions{2, 32});
    ASSERT_TRUE(ref_rt.ok()) << ref_rt.message();
    const auto ref = edge::test::run_reference(**ref_rt);

    CpuBackend cpu;
    ASSERT_TRUE(cpu.load(model, plan, BackendOptions{2, 0}).ok());
    const auto cpu_out = edge::test::run_backend(cpu);
    EXPECT_LE(rel_err(cpu_out, ref), c.precision ? 1e-3 : 1e-4) << "cpu backend vs reference";

    const DeviceReport dev = probe_devices();
    if (!dev.cuda_usable) GTEST_SKIP() << "CUDA part skipped: " << dev.reason;
    auto cuda = make_backend("cuda");
    ASSERT_TRUE(cuda.ok()) << cuda.message();
    auto st = (*cuda)->load(model, plan, BackendOptions{0, 0});
    ASSERT_TRUE(st.ok()) << st.message();
    const auto cuda_out = edge::test::run_backend(**cuda);
    if (c.precision) {  // same math as CUDA: FP32 activations times the dequantized weights
        auto deq_rt = LlamaCpu::create(dequantized(*model), RuntimeOptions{2, 32});
        ASSERT_TRUE(deq_rt.ok());
        EXPECT_LE(rel_err(cuda_out, edge::test::run_reference(**deq_rt)), 1e-4) << "cuda vs dequantized reference";
        EXPECT_LE(rel_err(cuda_out, cpu_out), 5e-2) << "cuda vs cpu backend (int8 activations on the cpu)";
    } else {
        EXPECT_LE(rel_err(cuda_out, ref), 1e-4) << "cuda vs reference";
    }
    EXPECT_GT((*cuda)->memory().weight_bytes, 0u);
}

INSTANTIATE_TEST_SUITE_P(Stories, CrossBackend,
                         ::testing::Values(Case{"fp32_fused", std::nullopt, true},
                                           Case{"fp32_unfused", std::nullopt, false},
                                           Case{"int8_fused", quant::Precision::INT8, true},
                                           Case{"int4_fused", quant::Precision::INT4, true},
                                           Case{"int4_unfused", quant::Precision::INT4, false}),
                         [](const auto& info) { return std::string(info.param.name); });

// Without a usable device, "cuda" is an error carrying the probe's reason, and "auto" falls back
// to the CPU saying why.
TEST(CrossBackend, FallbackSaysWhy) {
    const DeviceReport dev = probe_devices();
    if (dev.cuda_usable) GTEST_SKIP() << "a CUDA device answered: " << dev.cuda_name;
    auto c = make_backend("cuda");
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.message().find(dev.reason), std::string::npos) << c.message();
    std::string why;
    auto a = make_backend("auto", &why);
    ASSERT_TRUE(a.ok());
    EXPECT_EQ((*a)->name(), "cpu");
    EXPECT_NE(why.find(dev.reason), std::string::npos) << why;
}
