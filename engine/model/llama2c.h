// llama2.c checkpoints (internal to engine/model: the loader sniffs formats with this).
//   v0 (legacy): 7 int32 (dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len),
//       vocab_size < 0 = separate classifier; fp32 tensors in llama2.c order, then the RoPE
//       tables freq_cis_real/imag (skipped).
//   v1/v2: 256-byte header starting with the uint32 magic 0x616b3432 and an int32 version;
//       v1 = fp32 (norms first); v2 = norms in fp32, then each matrix as int8 values followed by
//       one f32 scale per group (group size: int32 at byte 37) over the flattened tensor; the
//       importer dequantizes v2 to F32 (source_type I8).
#pragma once
#include <cstddef>
#include <cstdint>

namespace edge::model {

constexpr uint32_t kLlama2cMagic = 0x616b3432u;

enum class Llama2cKind { None, Legacy, Versioned };

// From the first head_len bytes of a file of file_size bytes. Legacy: the 7-int header is
// plausible and the file size equals what it implies exactly. Versioned: it starts with the magic.
Llama2cKind sniff_llama2c(const uint8_t* head, size_t head_len, uint64_t file_size);

}  // namespace edge::model
