#include "ggml_kquant.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/core/half.h"

namespace edge::model {

namespace {

// A value's six-bit (0..63) or int8 code against a half step: 0 when the step is 0.
int code_of(float v, float step, int lo, int hi) {
    return step > 0.0f ? std::clamp(int(std::lround(v / step)), lo, hi) : 0;
}

void q4_k_block(const float* x, uint8_t* out) {
    float scale[8], minus[8];
    for (int j = 0; j < 8; ++j) {
        const float* s = x + 32 * j;
        const auto [lo, hi] = std::minmax_element(s, s + 32);
        const float mn = std::min(0.0f, *lo);
        scale[j] = (*hi - mn) / 15.0f;
        minus[j] = -mn;
    }
    const uint16_t dh = f32_to_f16(*std::max_element(scale, scale + 8) / 63.0f);
    const uint16_t mh = f32_to_f16(*std::max_element(minus, minus + 8) / 63.0f);
    const float d = f16_to_f32(dh), dmin = f16_to_f32(mh);
    uint8_t sc[8], m[8];
    for (int j = 0; j < 8; ++j) {
        sc[j] = uint8_t(code_of(scale[j], d, 0, 63));
        m[j] = uint8_t(code_of(minus[j], dmin, 0, 63));
    }
    std::memcpy(out, &dh, 2);
    std::memcpy(out + 2, &mh, 2);
    uint8_t* packed = out + 4;  // 12 bytes: ggml_dequant.cpp scale_min_k4 reads them back
    std::memset(packed, 0, 12);
    for (int j = 0; j < 4; ++j) {
        packed[j] = uint8_t(sc[j] | ((sc[j + 4] >> 4) << 6));
        packed[j + 4] = uint8_t(m[j] | ((m[j + 4] >> 4) << 6));
        packed[j + 8] = uint8_t((sc[j + 4] & 0x0f) | ((m[j + 4] & 0x0f) << 4));
    }
    uint8_t* qs = out + 16;
    for (int g = 0; g < 4; ++g) {
        uint8_t q[64];
        for (int h = 0; h < 2; ++h) {
            const int j = 2 * g + h;
            const float step = d * float(sc[j]), offset = dmin * float(m[j]);
            for (int l = 0; l < 32; ++l) q[32 * h + l] = uint8_t(code_of(x[32 * j + l] + offset, step, 0, 15));
        }
        for (int l = 0; l < 32; ++l) qs[32 * g + l] = uint8_t(q[l] | (q[32 + l] << 4));
    }
}

void q6_k_block(const float* x, uint8_t* out) {
    float scale[16];
    for (int i = 0; i < 16; ++i) {
        float amax = 0.0f;
        for (int l = 0; l < 16; ++l) amax = std::max(amax, std::fabs(x[16 * i + l]));
        scale[i] = amax / 31.0f;
    }
    const uint16_t dh = f32_to_f16(*std::max_element(scale, scale + 16) / 127.0f);
    const float d = f16_to_f32(dh);
    int8_t sc[16];
    int q[256];
    for (int i = 0; i < 16; ++i) {
        sc[i] = int8_t(code_of(scale[i], d, -128, 127));
        for (int l = 0; l < 16; ++l) q[16 * i + l] = code_of(x[16 * i + l], d * float(sc[i]), -32, 31) + 32;
    }
    uint8_t* ql = out;
    uint8_t* qh = out + 128;
    for (int half = 0; half < 2; ++half) {
        const int* v = q + 128 * half;
        for (int l = 0; l < 32; ++l) {
            ql[64 * half + l] = uint8_t((v[l] & 0x0f) | ((v[l + 64] & 0x0f) << 4));
            ql[64 * half + 32 + l] = uint8_t((v[l + 32] & 0x0f) | ((v[l + 96] & 0x0f) << 4));
            qh[32 * half + l] =
                uint8_t((v[l] >> 4) | ((v[l + 32] >> 4) << 2) | ((v[l + 64] >> 4) << 4) | ((v[l + 96] >> 4) << 6));
        }
    }
    std::memcpy(out + 192, sc, 16);
    std::memcpy(out + 208, &dh, 2);
}

}  // namespace

void quantize_row_q4_k(const float* x, int64_t n, uint8_t* out) {
    for (int64_t b = 0; b < n / kGgmlSuperBlock; ++b) q4_k_block(x + b * kGgmlSuperBlock, out + b * kQ4KBytes);
}

void quantize_row_q6_k(const float* x, int64_t n, uint8_t* out) {
    for (int64_t b = 0; b < n / kGgmlSuperBlock; ++b) q6_k_block(x + b * kGgmlSuperBlock, out + b * kQ6KBytes);
}

}  // namespace edge::model
