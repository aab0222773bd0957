// Layout of EdgeStudio's quantized weight tensors (DType::QI8 / DType::QI4), described once here
// and used by the quantizers (engine/quant), the CPU kernels (engine/runtime/qkernels) and the
// quantized model file. docs/quant-formats.md is the prose version of this header.
//
// A quantized tensor of shape [rows, cols] (a linear weight: [out, in]) holds, inside its one
// data buffer, three sections at 64-byte aligned offsets:
//   codes   integer codes. Row modes (per channel, per group): every row padded with zero codes to
//           a multiple of kQBlock (32) elements, row r at r * row_bytes. Flat mode: the flattened
//           tensor, unpadded (INT4: padded at the very end to a whole 32-element block).
//           INT8: one int8 per element. INT4: 16 bytes per 32 elements; in block-local order,
//           byte j holds element j in its low nibble and element j+16 in its high nibble.
//   scales  one per group: [rows][groups_per_row] (row modes) or [n_groups] (flat), stored as
//           float32 or as IEEE half (QuantInfo::scale_type; the default is half where every
//           scale fits one: INT4 g32 0.5625 instead of 0.625 byte per weight, INT8 g32 1.0625
//           instead of 1.125).
//   zeros   asymmetric only: one int8 per group, same order as the scales.
// Value of an element with code c (INT8: the signed byte; INT4: the nibble u in 0..15):
//   INT8 symmetric  w = s * c            INT8 asymmetric  w = s * (c - z)
//   INT4 symmetric  w = s * (u - 8)      INT4 asymmetric  w = s * (u - z)
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "engine/core/half.h"

namespace edge {

inline constexpr int64_t kQBlock = 32;  // packing block and activation-quantization block

enum class QGrouping : uint8_t {
    PerChannel = 0,  // one scale per output row
    Group = 1,       // groups of group_size along each row; the last group of a row may be partial
    Flat = 2,        // groups of group_size over the flattened tensor (crossing rows; llama2.c q80)
};

enum class QMethod : uint8_t { RTN = 0, AWQ = 1, GPTQ = 2 };

// How the group scales are stored.
enum class QScale : uint8_t { F32 = 0, F16 = 1 };
inline constexpr size_t quant_scale_bytes(QScale s) { return s == QScale::F16 ? 2 : 4; }

struct QuantInfo {
    int bits = 8;  // 8 or 4
    bool symmetric = true;
    QGrouping grouping = QGrouping::Group;
    int64_t group_size = 32;        // elements per scale (cols for per channel)
    QMethod method = QMethod::RTN;  // how the codes were chosen (informational)
    QScale scale_type = QScale::F32;

    // Derived by quant_layout().
    int64_t rows = 0, cols = 0;
    int64_t groups_per_row = 0;  // row modes; 0 for flat
    int64_t n_groups = 0;
    int64_t row_bytes = 0;  // bytes of codes per row (row modes); 0 for flat
    size_t codes_bytes = 0, scales_offset = 0, zeros_offset = 0, total_bytes = 0;

    bool row_mode() const { return grouping != QGrouping::Flat; }
    // Group index of element (r, c).
    int64_t group_of(int64_t r, int64_t c) const {
        return row_mode() ? r * groups_per_row + c / group_size : (r * cols + c) / group_size;
    }
};

inline constexpr size_t quant_align64(size_t n) { return (n + 63) / 64 * 64; }

// Fills the derived fields of q for a [rows, cols] tensor. Returns nullptr when the settings are
// usable, else a static description of what is wrong.
inline const char* quant_layout(QuantInfo& q, int64_t rows, int64_t cols) {
    if (q.bits != 8 && q.bits != 4) return "bits must be 8 or 4";
    if (rows <= 0 || cols <= 0) return "the tensor is empty";
    q.rows = rows;
    q.cols = cols;
    if (q.grouping == QGrouping::PerChannel) q.group_size = cols;
    if (q.group_size <= 0) return "the group size must be positive";
    const int64_t numel = rows * cols;
    if (q.row_mode()) {
        if (q.group_size > cols) return "the group size is larger than a row";
        q.groups_per_row = (cols + q.group_size - 1) / q.group_size;
        q.n_groups = rows * q.groups_per_row;
        const int64_t padded = (cols + kQBlock - 1) / kQBlock * kQBlock;
        q.row_bytes = q.bits == 8 ? padded : padded / 2;
        q.codes_bytes = size_t(rows * q.row_bytes);
    } else {
        if (q.group_size > numel) return "the group size is larger than the tensor";
        q.groups_per_row = 0;
        q.n_groups = (numel + q.group_size - 1) / q.group_size;
        q.row_bytes = 0;
        q.codes_bytes = q.bits == 8 ? size_t(numel) : size_t((numel + kQBlock - 1) / kQBlock * (kQBlock / 2));
    }
    q.scales_offset = quant_align64(q.codes_bytes);
    const size_t scales_end = q.scales_offset + size_t(q.n_groups) * quant_scale_bytes(q.scale_type);
    q.zeros_offset = quant_align64(scales_end);
    q.total_bytes = q.symmetric ? scales_end : q.zeros_offset + size_t(q.n_groups);
    return nullptr;
}

// Scale of group g, whichever way it is stored.
inline float quant_scale(const QuantInfo& q, const uint8_t* base, int64_t g) {
    if (q.scale_type == QScale::F16) {
        uint16_t h;
        std::memcpy(&h, base + q.scales_offset + size_t(g) * 2, 2);
        return f16_to_f32(h);
    }
    float s;
    std::memcpy(&s, base + q.scales_offset + size_t(g) * 4, 4);
    return s;
}

// Zero point of a group (the implicit one for symmetric formats).
inline int quant_zero(const QuantInfo& q, const uint8_t* base, int64_t g) {
    if (!q.symmetric) return int(reinterpret_cast<const int8_t*>(base + q.zeros_offset)[g]);
    return q.bits == 4 ? 8 : 0;
}

// Code of element (r, c): the int8 for INT8, the nibble 0..15 for INT4.
inline int quant_code(const QuantInfo& q, const uint8_t* base, int64_t r, int64_t c) {
    if (q.bits == 8) {
        const int64_t off = q.row_mode() ? r * q.row_bytes + c : r * q.cols + c;
        return int(reinterpret_cast<const int8_t*>(base)[off]);
    }
    int64_t blk_base, j;
    if (q.row_mode()) {
        blk_base = r * q.row_bytes + (c / kQBlock) * (kQBlock / 2);
        j = c % kQBlock;
    } else {
        const int64_t k = r * q.cols + c;
        blk_base = (k / kQBlock) * (kQBlock / 2);
        j = k % kQBlock;
    }
    const uint8_t b = base[blk_base + (j % (kQBlock / 2))];
    return j < kQBlock / 2 ? (b & 0x0f) : (b >> 4);
}

}  // namespace edge
