// FP32 weights against several tokens on x86-64 with AVX2+FMA: 8 rows transposed into the lanes,
// every output the bits of the one-token product (kernels::dot). qkernels.cpp's `rows` picks
// these; the quantized and the 16-bit float (FP16, BF16) tiles live in qkernels_avx*_tile.cpp.
#include "qkernels_impl.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "dot_lanes.h"
#include "kernels.h"

namespace edge::runtime::qkernels::detail {

namespace {
struct alignas(32) Vec8 {
    float v[8];
};

template <int N>
__attribute__((target("avx2,fma"))) void f32_panels(const float* w, const float* in, int n, float* out, int64_t out_dim,
                                                    int64_t in_dim, int64_t b, int64_t e) {
    thread_local std::vector<Vec8> buf;
    buf.resize(size_t(in_dim));
    __m256* rt = reinterpret_cast<__m256*>(buf.data());
    for (int64_t o = b; o < e; o += 8) {
        const int count = int(std::min<int64_t>(8, e - o));
        kernels::lanes::transpose_rows(w + o * in_dim, in_dim, count, int(in_dim), rt);
        // Three tokens share each transposed row vector (the rest one or two at a time).
        for (int t = 0; t < n;) {
            const int k = std::min(3, n - t);
            const float* q[3];
            for (int j = 0; j < 3; ++j) q[j] = in + int64_t(t + std::min(j, k - 1)) * in_dim;
            __m256 res[3];
            if (k == 3)
                kernels::lanes::dot8_tokens<N, 3>(q, rt, int(in_dim), res);
            else if (k == 2)
                kernels::lanes::dot8_tokens<N, 2>(q, rt, int(in_dim), res);
            else
                res[0] = kernels::lanes::dot8<N>(q[0], rt, int(in_dim));
            for (int j = 0; j < k; ++j) {
                alignas(32) float r[8];
                _mm256_store_ps(r, res[j]);
                std::memcpy(out + int64_t(t + j) * out_dim + o, r, sizeof(float) * size_t(count));
            }
            t += k;
        }
    }
}

}  // namespace

// FP32 weights against several tokens: panels of 8 rows transposed once, each token's 8 outputs
// from one kernels::lanes::dot8, which keeps kernels::dot's sum order lane by lane, so every output
// is the bits the per-row kernels::dot gives (QuantKernels.F32RowsInLanesGiveThePerRowDotsBits).
// Only where kernels::dot itself is the AVX2+FMA kernel, for widths of whole 8s.
bool f32_lanes_apply(int64_t in_dim) {
    static const bool avx2 = std::strcmp(kernels::dot_kernel_name(), "avx2-fma") == 0;
    return avx2 && in_dim % 8 == 0;
}

void f32_rows_lanes(const float* w, const float* in, int n, float* out, int64_t out_dim, int64_t in_dim, int64_t b,
                    int64_t e) {
    switch (in_dim) {
        case 64: return f32_panels<64>(w, in, n, out, out_dim, in_dim, b, e);
        case 128: return f32_panels<128>(w, in, n, out, out_dim, in_dim, b, e);
        case 256: return f32_panels<256>(w, in, n, out, out_dim, in_dim, b, e);
        case 288: return f32_panels<288>(w, in, n, out, out_dim, in_dim, b, e);
        case 512: return f32_panels<512>(w, in, n, out, out_dim, in_dim, b, e);
        default: return f32_panels<0>(w, in, n, out, out_dim, in_dim, b, e);
    }
}

}  // namespace edge::runtime::qkernels::detail

#endif
