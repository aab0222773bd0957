// CPU kernels for weights held as stored: F16, BF16, EdgeStudio's QI8 / QI4 (quant_format.h), and
// ggml's other block types as a GGUF stores them (Q4_K, Q5_K, Q6_K: integer dot products on the
// blocks in place, qkernels.cpp (portable) / qkernels_avx2.cpp / qkernels_avx512.cpp; Q4_1, Q5_0, Q5_1, Q2_K, Q3_K: a row
// dequantized at a time, then the FP32 dot; GGUF Q8_0 / Q4_0 are repacked into QI8 / QI4 when
// read).
//
// Quantized matmul never dequantizes a whole matrix. For row-mode tensors whose group size is a
// multiple of 32 (or per channel), the activation vector is quantized once per matmul to int8 in
// blocks of 32 (scale = max|x|/127, round half to even), and each output is a sum over 32-element
// blocks of  s_w * s_x * (Σ code·xq − z·Σ xq)  computed with integer dot products
// (AVX2: _mm256_maddubs_epi16 + _mm256_madd_epi16; AVX-512 VNNI: vpdpbusd with per-lane block
// scales, see qkernels_avx512.cpp). Other layouts (flat groups, odd group sizes)
// dequantize one row at a time into a small buffer and use the FP32 dot. The AVX-512/AVX2/FMA/F16C
// paths are chosen at run time; the portable path computes the same integer sums.
#pragma once
#include <cstdint>
#include <vector>

#include "engine/core/tensor.h"
#include "engine/core/thread_pool.h"

namespace edge::runtime::qkernels {

// True when the runtime can multiply by a weight tensor of this type in place.
bool supported(const Tensor& w);
// Dequantizes row r of a 2-D weight (any type supported() accepts) into out[cols].
void dequantize_row(const Tensor& w, int64_t r, float* out);
// The whole tensor as floats (tests, quantizers; never used by the executor).
std::vector<float> dequantize(const Tensor& w);

// out[t][o] = Σ_i W[o][i] · in[t][i] for n tokens, W = w (shape [out_dim, in_dim]), parallel over
// output rows. Works for every type supported() accepts (F32 included).
void matmul(float* out, const float* in, const Tensor& w, int n, ThreadPool& pool);

// Several products of the same input in one parallel region: out_j = in · w_jᵀ (all w_j with the
// same number of columns), e.g. Q/K/V or gate/up. The activations are quantized once for all the
// weights that share a layout, and the threads split the rows of all products laid end to end.
// Each out_j is exactly what matmul(out_j, in, *w_j, n) gives.
struct MatmulJob {
    float* out;
    const Tensor* w;
};
void matmul_multi(const MatmulJob* jobs, int count, const float* in, int n, ThreadPool& pool);

// out[t][o] = silu(Σ_i gate[o][i]·in[t][i]) · Σ_i up[o][i]·in[t][i] (gate and up of the same
// shape; up_scratch holds the up product, n × rows): both products and the SwiGLU in one parallel
// region, each thread applying kernels::swiglu to the rows it has just computed. Identical to
// matmul_multi of {gate, up} followed by kernels::swiglu, without the serial SwiGLU after the
// region (~13 µs per block of TinyLlama-1.1B, 2% of an INT4 decode step at 2 threads).
void matmul_gate_up_swiglu(float* out, float* up_scratch, const float* in, const Tensor& gate, const Tensor& up, int n,
                           ThreadPool& pool);

// Kernel families, in increasing order. The dispatcher uses the best one the processor has,
// capped by force_kernels (tests and A/B benches); Auto removes the cap.
//   Avx2:       row-mode QI4/QI8 with vpmaddubsw; the layouts rows_math takes (row_layout_ok)
//               with the AVX-512 kernels' per-row arithmetic, 4 tokens and more in panels of 8
//               rows with the rows in the lanes (qkernels_avx2_tile.cpp), the same bits either
//               way; K-quants, F16 and the rest token by token.
//   Avx512Vnni: row-mode QI4/QI8 (groups of 32·k, k dividing 16 or a multiple of 16; per
//               channel) with vpdpbusd: one token 4 rows per pass, 4 tokens and more in
//               panels of 16 rows with the rows in the lanes (qkernels_avx512_tile.cpp), the
//               same bits either way; other layouts and F16 fall back to the AVX2 kernels.
// On aarch64 the same ladder is Portable < Neon < NeonDotprod (qkernels_neon.cpp): the aarch64
// names share the x86 levels' numbers, one ladder per architecture.
//   Avx512VnniGfni: the same, with GFNI for the INT4 high nibbles (one instruction less per 128
//               weights and row).
enum class KernelLevel {
    Portable = 0,
    Avx2 = 1,
    Avx512Vnni = 2,
    Avx512VnniGfni = 3,
    Auto = 4,
    Neon = Avx2,
    NeonDotprod = Avx512Vnni
};
bool kernel_available(KernelLevel level);
// Caps the family (tests and A/B benches; Auto removes the cap). At start the cap is the
// environment's EDGE_KERNELS when set: "avx2", "avx512-vnni", "portable", ... (kernel_name's
// names) or "auto".
void force_kernels(KernelLevel cap);
KernelLevel kernel_level();  // the family in use now: the best the processor has, capped
// Which kernel family the quantized matmul uses now ("avx512-vnni-gfni", "avx512-vnni", "avx2",
// "neon-dotprod", "neon" or "portable").
const char* kernel_name();
void force_portable(bool on);  // force_kernels(on ? Portable : Auto)

// How the AVX-512 row kernels prefetch the next pass's rows. Both fetch the same lines and give
// the same results; which streams faster from DRAM depends on the processor, so Auto picks by
// vendor, as measured on the two VMs we have (docs/quant.md):
//   RowsL2        each row's line at the chunk's offset, into L2, 8 INT4 rows per pass (Intel
//                 Xeon: one thread streams ~13 GB/s instead of ~7 without prefetch)
//   SequentialL1  the lines of a pass `lead` passes ahead in address order, into L1, and its
//                 code lines one lead further into L2, 4 rows per pass (AMD EPYC: INT4 decode
//                 67-69% -> 82-85% of the bandwidth ceiling at 2 threads with the L1 part alone,
//                 83-85% with both and the cheaper kernel of 2026-12-01 14:00)
enum class RowPrefetch { Auto, RowsL2, SequentialL1 };
void force_row_prefetch(RowPrefetch p);        // tests and A/B benches; Auto: by processor
RowPrefetch row_prefetch();                    // the one in use (never Auto)
const char* row_prefetch_name(RowPrefetch p);  // "rows-l2", "sequential-l1", "auto"
// How many passes ahead SequentialL1 prefetches. Auto (0): 2 for INT4, 1 for INT8 — the same
// lead in bytes, ~8 KiB on 2048 columns. One pass of INT4 was too short a lead: a core computes
// it in ~80 ns, less than a DRAM miss, and the AMD EPYC VM streamed INT4 at 72% of one core's
// read bandwidth (2 passes: 84%) and 82% of two cores' (2 passes: 85%); INT8 measured best at 1
// (edge-quant-bench --mode stream --lead 1,2, docs/quant.md). RowsL2 always looks 1 pass ahead.
void force_prefetch_lead(int passes);  // tests and A/B benches; 0: Auto
int prefetch_lead(int bits);           // the one in use for weights of `bits` bits

// Activation quantization: n values -> ceil(n/32) blocks of 32 int8 (zero padded), one float
// scale and one int32 code sum per block.
struct QActs {
    std::vector<int8_t> q;
    std::vector<float> scale;
    std::vector<int32_t> sum;
    int64_t blocks = 0;
};
void quantize_acts(const float* x, int64_t n, QActs& out);

}  // namespace edge::runtime::qkernels
