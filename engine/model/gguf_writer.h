// GGUF v3 (or v2) writer, streaming: all tensor declarations come first (the header needs every
// offset), then the data of each tensor in declaration order, in as many pieces as the caller
// likes. Nothing is buffered beyond one conversion chunk, so a multi-GB model is never held
// twice in memory.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "engine/core/progress.h"
#include "engine/model/gguf.h"
#include "engine/model/ir.h"

namespace edge::model::gguf {

class Writer {
public:
    explicit Writer(uint32_t version = 3, uint32_t alignment = 32);
    ~Writer();
    Writer(const Writer&) = delete;
    Writer& operator=(const Writer&) = delete;

    // Metadata, in insertion order; setting a key again replaces its value in place.
    void set(const std::string& key, Value v);
    // Declares a tensor (shape outermost first, as in the IR). Any type with a ggml id may be
    // declared; write_f32 converts only to F32/F16/BF16, write_raw takes bytes in the type itself.
    Status add_tensor(const std::string& name, DType type, const std::vector<int64_t>& shape);

    // Creates `path` and writes header, metadata, tensor infos and padding.
    Status open(const std::string& path);
    // Appends elements of the current tensor (moving on to the next one when it is complete).
    Status write_f32(const float* data, int64_t n);
    Status write_raw(const void* data, size_t nbytes);
    // Checks that every tensor got all its bytes, flushes and closes.
    Status finish();

    size_t tensor_count() const { return tensors_.size(); }

private:
    struct Decl {
        std::string name;
        DType type;
        std::vector<int64_t> shape;
        uint64_t offset = 0;
        uint64_t nbytes = 0;
    };
    Status put(const void* p, size_t n);
    Status put_string(const std::string& s);
    Status put_value(const Value& v);
    Status pad_to(uint64_t alignment);
    Status advance(size_t nbytes);  // bookkeeping after data bytes of the current tensor

    uint32_t version_;
    uint32_t alignment_;
    std::vector<std::pair<std::string, Value>> kv_;
    std::vector<Decl> tensors_;
    std::string path_;
    std::FILE* out_ = nullptr;
    uint64_t pos_ = 0;
    size_t current_ = 0;    // tensor being written
    uint64_t written_ = 0;  // bytes of it written so far
    std::vector<uint16_t> scratch_;
};

// llama.* and tokenizer.ggml.* metadata for a config and tokenizer (general.architecture too).
// general.architecture = arch and the <arch>.* hyperparameters of `c` (context, widths, heads,
// norm epsilon, rotary dimension and base, vocabulary size), as llama.cpp's converter writes them.
void set_architecture(Writer& w, const std::string& arch, const LlamaConfig& c);
void set_llama_metadata(Writer& w, const LlamaConfig& c, const tokenizer::TokenizerSpec& tok, const std::string& name,
                        const std::string& arch = "llama");

}  // namespace edge::model::gguf

namespace edge::model {
// Writes a llama Model as GGUF v3 with `type` (F32, F16 or BF16) for its F32 matrices; 1-D
// tensors (norm weights) stay F32 as llama.cpp expects; quantized layers as model::export_gguf
// writes them (engine/model/gguf_export.h). Reports progress per tensor.
Status write_gguf_model(const Model& m, const std::string& path, DType type = DType::F32, Progress* progress = nullptr);
}  // namespace edge::model
