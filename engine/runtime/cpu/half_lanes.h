// Internal to the x86 CPU kernels: 16-bit float weights widened to floats, exactly, 8 (AVX2) or 16
// (AVX-512) at a time. IEEE half goes through F16C's vcvtph2ps; a bfloat16 is the top half of a
// float, so it is zero-extended to 32 bits and shifted up by 16. The FP16 and BF16 products share
// every other instruction (dot_half_*, half_tokens_*).
#pragma once
#if defined(__x86_64__)
#include <immintrin.h>

#include <cstdint>

#include "qkernels_impl.h"

namespace edge::runtime::qkernels::detail {

template <Half H>
__attribute__((target("avx2,fma,f16c"), always_inline)) inline __m256 widen8(const uint16_t* p) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    if constexpr (H == Half::F16) return _mm256_cvtph_ps(v);
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(v), 16));
}

template <Half H>
__attribute__((target("avx512f,avx512bw,avx512vl,f16c"), always_inline)) inline __m512 widen16(__m256i v) {
    if constexpr (H == Half::F16) return _mm512_cvtph_ps(v);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(v), 16));
}
template <Half H>
__attribute__((target("avx512f,avx512bw,avx512vl,f16c"), always_inline)) inline __m512 widen16(const uint16_t* p) {
    return widen16<H>(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
// The lanes of m from p, the others 0.0f (nothing read past them).
template <Half H>
__attribute__((target("avx512f,avx512bw,avx512vl,f16c"), always_inline)) inline __m512 widen16(const uint16_t* p,
                                                                                               __mmask16 m) {
    return widen16<H>(_mm256_maskz_loadu_epi16(m, p));
}

}  // namespace edge::runtime::qkernels::detail

#endif
