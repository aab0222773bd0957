// One entry point for every model format: the format is told by content (magic) and then by
// name (a folder = Hugging Face; .gguf; .bin = llama2.c; .safetensors; .onnx; .pt).
#pragma once
#include <string>

#include "engine/core/progress.h"
#include "engine/core/result.h"
#include "engine/model/ir.h"

namespace edge::model {

struct LoadOptions {
    std::string tokenizer_path;  // tokenizer file for formats that do not embed one (llama2.c)
    // Read the header, configuration, tokenizer and tensor table only: GGUF and Hugging Face
    // tensors keep no data and are read one at a time when a command needs them
    // (engine/model/weights.h). Other formats load as usual (llama2.c and .edge are mapped).
    bool lazy_weights = false;
};

Result<Model> load_model(const std::string& path, const LoadOptions& opts = {}, Progress* progress = nullptr);

// Format-specific importers (each fills source_path/source_format, converts to F32 - now or,
// with lazy_weights, one tensor at a time later - and validates).
Result<Model> load_gguf_model(const std::string& path, Progress* progress = nullptr, bool lazy_weights = false);
Result<Model> load_llama2c_model(const std::string& path, const std::string& tokenizer_path,
                                 Progress* progress = nullptr);
Result<Model> load_hf_model(const std::string& folder, Progress* progress = nullptr, bool lazy_weights = false);

}  // namespace edge::model
