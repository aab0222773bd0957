#include "tensor.h"

#include <cstdlib>
#include <cstring>
#include <new>

namespace edge {

const char* dtype_name(DType t) {
    switch (t) {
        case DType::F32: return "F32";
        case DType::F16: return "F16";
        case DType::BF16: return "BF16";
        case DType::Q8_0: return "Q8_0";
        case DType::Q4_0: return "Q4_0";
        case DType::Q4_1: return "Q4_1";
        case DType::Q5_0: return "Q5_0";
        case DType::Q5_1: return "Q5_1";
        case DType::Q2_K: return "Q2_K";
        case DType::Q3_K: return "Q3_K";
        case DType::Q4_K: return "Q4_K";
        case DType::Q5_K: return "Q5_K";
        case DType::Q6_K: return "Q6_K";
        case DType::Q8_K: return "Q8_K";
        case DType::IQ2_XXS: return "IQ2_XXS";
        case DType::IQ2_XS: return "IQ2_XS";
        case DType::IQ2_S: return "IQ2_S";
        case DType::IQ3_XXS: return "IQ3_XXS";
        case DType::IQ3_S: return "IQ3_S";
        case DType::IQ1_S: return "IQ1_S";
        case DType::IQ1_M: return "IQ1_M";
        case DType::IQ4_NL: return "IQ4_NL";
        case DType::IQ4_XS: return "IQ4_XS";
        case DType::TQ1_0: return "TQ1_0";
        case DType::TQ2_0: return "TQ2_0";
        case DType::I8: return "I8";
        case DType::I32: return "I32";
        case DType::QI8: return "QI8";
        case DType::QI4: return "QI4";
    }
    return "?";
}

int64_t dtype_block_elems(DType t) {
    switch (t) {
        case DType::Q8_0:
        case DType::Q4_0:
        case DType::Q4_1:
        case DType::Q5_0:
        case DType::Q5_1:
        case DType::IQ4_NL: return 32;
        case DType::IQ2_XXS:
        case DType::IQ2_XS:
        case DType::IQ2_S:
        case DType::IQ3_XXS:
        case DType::IQ3_S:
        case DType::IQ1_S:
        case DType::IQ1_M:
        case DType::IQ4_XS:
        case DType::TQ1_0:
        case DType::TQ2_0:
        case DType::Q2_K:
        case DType::Q3_K:
        case DType::Q4_K:
        case DType::Q5_K:
        case DType::Q6_K:
        case DType::Q8_K: return 256;
        case DType::QI4: return 2;  // nominal: the real size comes from Tensor::quant
        default: return 1;
    }
}

int64_t dtype_block_bytes(DType t) {
    switch (t) {
        case DType::F32: return 4;
        case DType::F16:
        case DType::BF16: return 2;
        case DType::Q8_0: return 34;
        case DType::Q4_0: return 18;
        case DType::Q4_1: return 20;
        case DType::Q5_0: return 22;
        case DType::Q5_1: return 24;
        case DType::Q2_K: return 84;
        case DType::Q3_K: return 110;
        case DType::Q4_K: return 144;
        case DType::Q5_K: return 176;
        case DType::Q6_K: return 210;
        case DType::Q8_K: return 292;
        case DType::IQ2_XXS: return 66;
        case DType::IQ2_XS: return 74;
        case DType::IQ2_S: return 82;
        case DType::IQ3_XXS: return 98;
        case DType::IQ3_S: return 110;
        case DType::IQ1_S: return 50;
        case DType::IQ1_M: return 56;
        case DType::IQ4_NL: return 18;
        case DType::IQ4_XS: return 136;
        case DType::TQ1_0: return 54;
        case DType::TQ2_0: return 66;
        case DType::I8: return 1;
        case DType::I32: return 4;
        case DType::QI8:  // nominal: the real size comes from Tensor::quant
        case DType::QI4: return 1;
    }
    return 0;
}

size_t dtype_bytes(DType t, int64_t n) { return size_t(n / dtype_block_elems(t)) * size_t(dtype_block_bytes(t)); }

int64_t Tensor::numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
}

std::string Tensor::shape_str() const {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) {
        if (i) s += ", ";
        s += std::to_string(shape[i]);
    }
    return s + "]";
}

std::shared_ptr<uint8_t> alloc_aligned(size_t bytes) {
    const size_t rounded = (bytes + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, rounded ? rounded : 64);
    if (!p) throw std::bad_alloc();
    return std::shared_ptr<uint8_t>(static_cast<uint8_t*>(p), [](uint8_t* q) { std::free(q); });
}

Tensor Tensor::zeros_f32(std::string name, std::vector<int64_t> shape) {
    Tensor t = alloc(std::move(name), DType::F32, std::move(shape));
    std::memset(t.data.get(), 0, t.nbytes);
    return t;
}

Tensor Tensor::alloc(std::string name, DType type, std::vector<int64_t> shape) {
    Tensor t;
    t.name = std::move(name);
    t.type = type;
    t.source_type = type;
    t.shape = std::move(shape);
    t.nbytes = dtype_bytes(type, t.numel());
    t.data = alloc_aligned(t.nbytes);
    return t;
}

}  // namespace edge
