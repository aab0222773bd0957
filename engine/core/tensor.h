// Tensors of the IR: a name, an element type, a shape (outermost first, row-major: a linear
// weight is [out_features, in_features]) and bytes that are either owned or live inside a
// memory-mapped file (an aliasing shared_ptr keeps the mapping alive).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/quant_format.h"

namespace edge {

// Element/storage types. The GGUF-style block types are what importers may read; the IR executed
// in FP32 holds F32 tensors and remembers the type it came from in Tensor::source_type.
enum class DType : uint8_t {
    F32,
    F16,
    BF16,
    Q8_0,
    Q4_0,
    Q4_1,
    Q5_0,
    Q5_1,
    Q2_K,
    Q3_K,
    Q4_K,
    Q5_K,
    Q6_K,
    Q8_K,
    // ggml's importance-matrix and ternary types: their blocks are known by size, so a file
    // holding them opens and is shown, but nothing here converts or runs them (can_dequantize
    // says no, and the error names the tensor and its type).
    IQ2_XXS,
    IQ2_XS,
    IQ2_S,
    IQ3_XXS,
    IQ3_S,
    IQ1_S,
    IQ1_M,
    IQ4_NL,
    IQ4_XS,
    TQ1_0,
    TQ2_0,
    I8,
    I32,
    // EdgeStudio's own quantized storage (engine/quant, docs/quant-formats.md): integer codes +
    // group scales (+ zero points), laid out as Tensor::quant describes.
    QI8,  // 8-bit codes
    QI4,  // 4-bit codes, two per byte
};

const char* dtype_name(DType t);
// Elements per block and bytes per block (1 and sizeof(element) for plain types).
int64_t dtype_block_elems(DType t);
int64_t dtype_block_bytes(DType t);
// Bytes for n elements (n must be a multiple of the block size for block types).
size_t dtype_bytes(DType t, int64_t n);

struct Tensor {
    std::string name;
    DType type = DType::F32;
    DType source_type = DType::F32;  // the type in the file it was read from
    std::vector<int64_t> shape;      // outermost first
    std::shared_ptr<uint8_t> data;   // owned or aliasing a mapping
    size_t nbytes = 0;
    // Set for QI8/QI4 tensors only: bits, grouping, group size and where codes, scales and zero
    // points sit inside `data` (engine/core/quant_format.h).
    std::shared_ptr<const QuantInfo> quant;

    int64_t numel() const;
    int64_t rows() const { return shape.empty() ? 1 : numel() / shape.back(); }
    int64_t cols() const { return shape.empty() ? 1 : shape.back(); }
    std::string shape_str() const;

    const float* f32() const { return reinterpret_cast<const float*>(data.get()); }
    float* f32_mut() { return reinterpret_cast<float*>(data.get()); }
    const void* raw() const { return data.get(); }

    // A new F32 tensor with zeroed, 64-byte-aligned, owned storage.
    static Tensor zeros_f32(std::string name, std::vector<int64_t> shape);
    // A new tensor of `type` with owned uninitialised storage of dtype_bytes(type, numel).
    static Tensor alloc(std::string name, DType type, std::vector<int64_t> shape);
};

// 64-byte aligned owned buffer.
std::shared_ptr<uint8_t> alloc_aligned(size_t bytes);

}  // namespace edge
