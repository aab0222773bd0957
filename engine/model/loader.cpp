// Format dispatcher: a folder is a Hugging Face model; a file is told by its content (GGUF magic,
// llama2.c header, safetensors header), then by its extension for a more specific error.
// LoadOptions::tokenizer_path is used by llama2.c checkpoints only (the others embed or sit
// beside their tokenizer).
#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>

#include "engine/model/edge_file.h"
#include "engine/model/edgeq.h"
#include "engine/model/llama2c.h"
#include "engine/model/loader.h"
#include "engine/model/onnx.h"
#include "engine/model/safetensors.h"

namespace edge::model {

namespace {

namespace fs = std::filesystem;

constexpr const char* kSupported =
    "supported: GGUF (.gguf), llama2.c checkpoints (.bin, v0 legacy and v1 fp32), Hugging Face folders "
    "(config.json + model.safetensors or shards + tokenizer.json), ONNX CNNs (.onnx)";

std::string lower_ext(const fs::path& p) {
    std::string e = p.extension().string();
    for (char& ch : e) ch = char(std::tolower(static_cast<unsigned char>(ch)));
    return e;
}

bool is_hf_weights_name(const std::string& name) {
    static const std::regex shard(R"(model-\d+-of-\d+\.safetensors)");
    return name == "model.safetensors" || std::regex_match(name, shard);
}

}  // namespace

Result<Model> load_model(const std::string& path, const LoadOptions& opts, Progress* progress) {
    if (path.empty()) return err("no model path given (", kSupported, ")");
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (ec || !fs::exists(st)) return err(path, ": no such file or folder");
    if (fs::is_directory(st)) return load_hf_model(path, progress, opts.lazy_weights);
    if (!fs::is_regular_file(st)) return err(path, ": not a regular file or folder");

    const uint64_t size = fs::file_size(path, ec);
    if (ec) return err(path, ": cannot read its size: ", ec.message());
    uint8_t head[64] = {};
    size_t got = 0;
    {
        std::ifstream in(path, std::ios::binary);
        if (!in) return err(path, ": cannot open for reading");
        in.read(reinterpret_cast<char*>(head), sizeof head);
        got = size_t(in.gcount());
    }
    if (got == 0) return err(path, ": the file is empty (", kSupported, ")");

    if (got >= 4 && head[0] == 'G' && head[1] == 'G' && head[2] == 'U' && head[3] == 'F')
        return load_gguf_model(path, progress, opts.lazy_weights);
    if (is_edgeq(head, got)) return load_edgeq_model(path, progress);
    if (is_edge_file(head, got) || lower_ext(fs::path(path)) == ".edge") return load_edge_model(path, progress);
    if (sniff_llama2c(head, got, size) != Llama2cKind::None)
        return load_llama2c_model(path, opts.tokenizer_path, progress);

    const fs::path p(path);
    const std::string ext = lower_ext(p);
    uint64_t hdr_len = 0;
    for (int i = 7; i >= 0 && got >= 8; --i) hdr_len = (hdr_len << 8) | head[i];
    const bool safetensors_like = got >= 9 && hdr_len + 8 <= size && head[8] == '{';
    if (safetensors_like || ext == ".safetensors") {
        const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
        if (is_hf_weights_name(p.filename().string()) && fs::is_regular_file(dir / "config.json", ec))
            return load_hf_model(dir.string(), progress, opts.lazy_weights);
        return err(path,
                   ": a safetensors file alone does not describe a model; a config.json is needed: pass the "
                   "Hugging Face folder that holds config.json, model.safetensors and tokenizer.json");
    }
    if (ext == ".bin")  // a llama2.c checkpoint whose header or size is off: say exactly what
        return load_llama2c_model(path, opts.tokenizer_path, progress);
    if (ext == ".onnx") return load_onnx_model(path, progress);
    if (ext == ".pt" || ext == ".pth")
        return err(path, ": TorchScript/PyTorch files cannot be loaded yet (", kSupported, ")");
    return err(path, ": unrecognised model format (", kSupported, ")");
}

}  // namespace edge::model
