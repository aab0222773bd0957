// CUDA kernels of the backend (architectures 87 and 90). Numerics follow the CPU reference:
// FP32 accumulation, RMSNorm x / sqrt(mean(x^2) + eps) * w, interleaved-pair RoPE from host
// tables, softmax with the max subtracted, silu(g) * u.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cfloat>

#include "cuda_kernels.h"

namespace edge::runtime::cuda {

namespace {

constexpr int kWarp = 32;

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = kWarp / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ float warp_max(float v) {
    for (int o = kWarp / 2; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// Block-wide sum / max (blockDim.x a multiple of 32, at most 1024); every thread gets the result.
__device__ float block_sum(float v) {
    __shared__ float part[32];
    const int lane = threadIdx.x % kWarp, wid = threadIdx.x / kWarp;
    v = warp_sum(v);
    __syncthreads();
    if (lane == 0) part[wid] = v;
    __syncthreads();
    const int nw = (blockDim.x + kWarp - 1) / kWarp;
    float r = lane < nw ? part[lane] : 0.0f;
    r = warp_sum(r);
    return r;
}
__device__ float block_max(float v) {
    __shared__ float part[32];
    const int lane = threadIdx.x % kWarp, wid = threadIdx.x / kWarp;
    v = warp_max(v);
    __syncthreads();
    if (lane == 0) part[wid] = v;
    __syncthreads();
    const int nw = (blockDim.x + kWarp - 1) / kWarp;
    float r = lane < nw ? part[lane] : -FLT_MAX;
    return warp_max(r);
}

// Scale of group g of a quantized weight.
__device__ __forceinline__ float wscale(const DevWeight& w, int g) {
    return w.scales_f16 ? __half2float(static_cast<const __half*>(w.scales)[g])
                        : static_cast<const float*>(w.scales)[g];
}

// Element (r, c) of a weight, dequantized.
__device__ __forceinline__ float wval(const DevWeight& w, int r, int c) {
    switch (w.type) {
        case kWF32: return static_cast<const float*>(w.data)[(long long)r * w.cols + c];
        case kWF16: return __half2float(static_cast<const __half*>(w.data)[(long long)r * w.cols + c]);
        case kWQI8: {
            const int g = r * w.groups_per_row + c / w.group_size;
            // NOLINTNEXTLINE(bugprone-signed-char-misuse): QI8 codes are signed bytes, sign extension intended
            const int code = static_cast<const int8_t*>(w.data)[(long long)r * w.row_bytes + c];
            const int z = w.zeros ? w.zeros[g] : 0;
            return wscale(w, g) * float(code - z);
        }
        default: {  // kWQI4
            const int g = r * w.groups_per_row + c / w.group_size;
            const int j = c % 32;
            const uint8_t b =
                static_cast<const uint8_t*>(w.data)[(long long)r * w.row_bytes + (c / 32) * 16 + (j % 16)];
            const int u = j < 16 ? (b & 0x0f) : (b >> 4);
            const int z = w.zeros ? w.zeros[g] : 8;
            return wscale(w, g) * float(u - z);
        }
    }
}

__global__ void embedding_kernel(float* out, const int32_t* tokens, int n, DevWeight w) {
    const int t = blockIdx.x;
    if (t >= n) return;
    int tok = tokens[t];
    if (tok < 0 || tok >= w.rows) tok = 0;
    for (int c = threadIdx.x; c < w.cols; c += blockDim.x) out[(long long)t * w.cols + c] = wval(w, tok, c);
}

__global__ void rmsnorm_kernel(float* out, const float* x, const float* w, int dim, float eps) {
    const float* xr = x + (long long)blockIdx.x * dim;
    float* yr = out + (long long)blockIdx.x * dim;
    float ss = 0.0f;
    for (int i = threadIdx.x; i < dim; i += blockDim.x) ss += xr[i] * xr[i];
    ss = block_sum(ss);
    const float inv = rsqrtf(ss / float(dim) + eps);
    for (int i = threadIdx.x; i < dim; i += blockDim.x) yr[i] = xr[i] * inv * w[i];
}

__global__ void rope_kernel(float* q, float* k, const float* cos_t, const float* sin_t, int pos, int n_heads, int n_kv,
                            int head_dim, int half) {
    const int t = blockIdx.x;
    const float* cs = cos_t + (long long)(pos + t) * half;
    const float* sn = sin_t + (long long)(pos + t) * half;
    const int total = (n_heads + n_kv) * half;
    for (int j = threadIdx.x; j < total; j += blockDim.x) {
        const int h = j / half, i = j % half;
        float* v = h < n_heads ? q + ((long long)t * n_heads + h) * head_dim
                               : k + ((long long)t * n_kv + (h - n_heads)) * head_dim;
        const float a = v[2 * i], b = v[2 * i + 1];
        v[2 * i] = a * cs[i] - b * sn[i];
        v[2 * i + 1] = a * sn[i] + b * cs[i];
    }
}

// One warp per output row; lanes stride over the row 32 elements at a time (coalesced codes).
__global__ void gemv_kernel(float* out, const float* x, DevWeight w) {
    const int row = blockIdx.x * (blockDim.x / kWarp) + threadIdx.x / kWarp;
    const int lane = threadIdx.x % kWarp;
    if (row >= w.rows) return;
    float acc = 0.0f;
    for (int c = lane; c < w.cols; c += kWarp) acc += wval(w, row, c) * x[c];
    acc = warp_sum(acc);
    if (lane == 0) out[row] = acc;
}

constexpr int kTile = 32;
constexpr int kRowsPerThread = 4;  // block (32, 8): each thread computes 4 outputs of the tile

__global__ void gemm_kernel(float* out, const float* in, DevWeight w, int n) {
    __shared__ float As[kTile][kTile + 1];  // [token][k]
    __shared__ float Ws[kTile][kTile + 1];  // [output][k]
    const int t0 = blockIdx.y * kTile, o0 = blockIdx.x * kTile;
    const int tx = threadIdx.x, ty = threadIdx.y;
    float acc[kRowsPerThread] = {0.0f, 0.0f, 0.0f, 0.0f};
    const int K = w.cols;
    for (int k0 = 0; k0 < K; k0 += kTile) {
        for (int j = 0; j < kRowsPerThread; ++j) {
            const int r = ty + j * (kTile / kRowsPerThread);
            const int t = t0 + r, o = o0 + r, k = k0 + tx;
            As[r][tx] = (t < n && k < K) ? in[(long long)t * K + k] : 0.0f;
            Ws[r][tx] = (o < w.rows && k < K) ? wval(w, o, k) : 0.0f;
        }
        __syncthreads();
        for (int kk = 0; kk < kTile; ++kk) {
            const float wv = Ws[tx][kk];
            for (int j = 0; j < kRowsPerThread; ++j) acc[j] += As[ty + j * (kTile / kRowsPerThread)][kk] * wv;
        }
        __syncthreads();
    }
    for (int j = 0; j < kRowsPerThread; ++j) {
        const int t = t0 + ty + j * (kTile / kRowsPerThread), o = o0 + tx;
        if (t < n && o < w.rows) out[(long long)t * w.rows + o] = acc[j];
    }
}

__device__ __forceinline__ long long kv_index(const int32_t* table, int p, int kv_dim) {
    return ((long long)table[p / 16] * 16 + p % 16) * kv_dim;
}

__global__ void kv_append_kernel(float* k_pool, float* v_pool, const int32_t* table, const float* k, const float* v,
                                 int pos, int kv_dim) {
    const int t = blockIdx.x;
    const long long dst = kv_index(table, pos + t, kv_dim);
    for (int i = threadIdx.x; i < kv_dim; i += blockDim.x) {
        k_pool[dst + i] = k[(long long)t * kv_dim + i];
        v_pool[dst + i] = v[(long long)t * kv_dim + i];
    }
}

// grid (n_heads, n); dynamic shared memory: head_dim floats (the query).
__global__ void attention_kernel(float* out, const float* q, const float* k_pool, const float* v_pool,
                                 const int32_t* table, float* scores, int pos, int n_heads, int n_kv, int head_dim,
                                 int score_stride) {
    extern __shared__ float qs[];
    const int h = blockIdx.x, t = blockIdx.y;
    const int len = pos + t + 1;
    const int kv_dim = n_kv * head_dim;
    const int kvo = (h / (n_heads / n_kv)) * head_dim;
    const float* qh = q + ((long long)t * n_heads + h) * head_dim;
    for (int i = threadIdx.x; i < head_dim; i += blockDim.x) qs[i] = qh[i];
    __syncthreads();
    float* att = scores + ((long long)t * n_heads + h) * score_stride;
    const float inv = rsqrtf(float(head_dim));
    float mx = -FLT_MAX;
    for (int p = threadIdx.x; p < len; p += blockDim.x) {
        const float* kr = k_pool + kv_index(table, p, kv_dim) + kvo;
        float s = 0.0f;
        for (int i = 0; i < head_dim; ++i) s += qs[i] * kr[i];
        s *= inv;
        att[p] = s;
        mx = fmaxf(mx, s);
    }
    mx = block_max(mx);
    float sum = 0.0f;
    for (int p = threadIdx.x; p < len; p += blockDim.x) {
        const float e = __expf(att[p] - mx);
        att[p] = e;
        sum += e;
    }
    sum = block_sum(sum);
    __syncthreads();  // every att[p] written before any thread reads them all
    const float inv_sum = 1.0f / sum;
    float* o = out + ((long long)t * n_heads + h) * head_dim;
    for (int i = threadIdx.x; i < head_dim; i += blockDim.x) {
        float acc = 0.0f;
        for (int p = 0; p < len; ++p) acc += att[p] * v_pool[kv_index(table, p, kv_dim) + kvo + i];
        o[i] = acc * inv_sum;
    }
}

__global__ void swiglu_kernel(float* a, const float* b, size_t n) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
        const float g = a[i];
        a[i] = g / (1.0f + __expf(-g)) * b[i];
    }
}

__global__ void add_kernel(float* y, const float* a, const float* b, size_t n) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
        y[i] = a[i] + b[i];
}

// (value, index) ordering: larger value first, then lower index.
__device__ __forceinline__ bool better(float v, int i, float bv, int bi) { return v > bv || (v == bv && i < bi); }

// Block-wide best (value, index) among logits strictly after (after_v, after_i) in that ordering.
__device__ void block_best(const float* logits, int n, float after_v, int after_i, bool bounded, float* out_v,
                           int* out_i) {
    __shared__ float sv[1024];
    __shared__ int si[1024];
    float bv = -FLT_MAX;
    int bi = 0x7fffffff;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        const float v = logits[i];
        if (bounded && !better(after_v, after_i, v, i)) continue;  // not after the previous pick
        if (better(v, i, bv, bi)) {
            bv = v;
            bi = i;
        }
    }
    sv[threadIdx.x] = bv;
    si[threadIdx.x] = bi;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s && better(sv[threadIdx.x + s], si[threadIdx.x + s], sv[threadIdx.x], si[threadIdx.x])) {
            sv[threadIdx.x] = sv[threadIdx.x + s];
            si[threadIdx.x] = si[threadIdx.x + s];
        }
        __syncthreads();
    }
    *out_v = sv[0];
    *out_i = si[0];
    __syncthreads();
}

__global__ void argmax_kernel(int32_t* out, const float* logits, int n) {
    float v;
    int i;
    block_best(logits, n, 0.0f, 0, false, &v, &i);
    if (threadIdx.x == 0) *out = i == 0x7fffffff ? 0 : i;
}

constexpr int kMaxTopK = 256;

__global__ void topk_sample_kernel(int32_t* out, const float* logits, int n, int k, float temperature, float u) {
    __shared__ float tv[kMaxTopK];
    __shared__ int ti[kMaxTopK];
    float v = 0.0f;
    int idx = 0;
    int got = 0;
    for (int j = 0; j < k; ++j) {
        block_best(logits, n, v, idx, j > 0, &v, &idx);
        if (idx == 0x7fffffff) break;
        if (threadIdx.x == 0) {
            tv[j] = v;
            ti[j] = idx;
        }
        got = j + 1;
    }
    if (threadIdx.x != 0) return;
    if (got == 0) {
        *out = 0;
        return;
    }
    float sum = 0.0f;
    for (int j = 0; j < got; ++j) sum += __expf((tv[j] - tv[0]) / temperature);
    float cum = 0.0f;
    for (int j = 0; j < got; ++j) {
        cum += __expf((tv[j] - tv[0]) / temperature) / sum;
        if (u < cum) {
            *out = ti[j];
            return;
        }
    }
    *out = ti[got - 1];
}

cudaStream_t S(Stream s) { return static_cast<cudaStream_t>(s); }
int last() { return int(cudaGetLastError()); }
unsigned grid_for(size_t n, int threads) {
    const size_t g = (n + size_t(threads) - 1) / size_t(threads);
    return unsigned(g < 65535 ? (g ? g : 1) : 65535);
}

}  // namespace

int launch_embedding(float* out, const int32_t* tokens, int n, const DevWeight& w, Stream s) {
    embedding_kernel<<<n, 256, 0, S(s)>>>(out, tokens, n, w);
    return last();
}
int launch_rmsnorm(float* out, const float* x, const float* w, int rows, int dim, float eps, Stream s) {
    rmsnorm_kernel<<<rows, 256, 0, S(s)>>>(out, x, w, dim, eps);
    return last();
}
int launch_rope(float* q, float* k, const float* cos_t, const float* sin_t, int n, int pos, int n_heads, int n_kv,
                int head_dim, int half, Stream s) {
    rope_kernel<<<n, 128, 0, S(s)>>>(q, k, cos_t, sin_t, pos, n_heads, n_kv, head_dim, half);
    return last();
}
int launch_gemv(float* out, const float* x, const DevWeight& w, Stream s) {
    constexpr int kWarpsPerBlock = 8;
    gemv_kernel<<<(w.rows + kWarpsPerBlock - 1) / kWarpsPerBlock, kWarpsPerBlock * kWarp, 0, S(s)>>>(out, x, w);
    return last();
}
int launch_gemm(float* out, const float* in, const DevWeight& w, int n, Stream s) {
    const dim3 grid((w.rows + kTile - 1) / kTile, (n + kTile - 1) / kTile);
    gemm_kernel<<<grid, dim3(kTile, kTile / kRowsPerThread), 0, S(s)>>>(out, in, w, n);
    return last();
}
int launch_kv_append(float* k_pool, float* v_pool, const int32_t* table, const float* k, const float* v, int n, int pos,
                     int kv_dim, Stream s) {
    kv_append_kernel<<<n, 128, 0, S(s)>>>(k_pool, v_pool, table, k, v, pos, kv_dim);
    return last();
}
int launch_attention(float* out, const float* q, const float* k_pool, const float* v_pool, const int32_t* table,
                     float* scores, int n, int pos, int n_heads, int n_kv, int head_dim, int score_stride, Stream s) {
    attention_kernel<<<dim3(n_heads, n), 128, size_t(head_dim) * sizeof(float), S(s)>>>(
        out, q, k_pool, v_pool, table, scores, pos, n_heads, n_kv, head_dim, score_stride);
    return last();
}
int launch_swiglu(float* a, const float* b, size_t n, Stream s) {
    swiglu_kernel<<<grid_for(n, 256), 256, 0, S(s)>>>(a, b, n);
    return last();
}
int launch_add(float* y, const float* a, const float* b, size_t n, Stream s) {
    add_kernel<<<grid_for(n, 256), 256, 0, S(s)>>>(y, a, b, n);
    return last();
}
int launch_argmax(int32_t* out, const float* logits, int n, Stream s) {
    argmax_kernel<<<1, 1024, 0, S(s)>>>(out, logits, n);
    return last();
}
int launch_topk_sample(int32_t* out, const float* logits, int n, int k, float temperature, float u, Stream s) {
    if (k <= 0 || k > kMaxTopK) k = kMaxTopK;
    if (k > n) k = n;
    if (!(temperature > 0.0f)) return launch_argmax(out, logits, n, s);
    topk_sample_kernel<<<1, 1024, 0, S(s)>>>(out, logits, n, k, temperature, u);
    return last();
}

const char* error_string(int e) { return cudaGetErrorString(cudaError_t(e)); }

}  // namespace edge::runtime::cuda
