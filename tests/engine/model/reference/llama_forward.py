#!/usr/bin/python3
"""Independent reference for the Llama forward pass, run by Debian's python3 with python3-torch.

Reads a Hugging Face folder (config.json + model.safetensors, F32) and computes, in float64,
the logits of every position of a token sequence, following the published formulas in the
Hugging Face layout (rotate-half RoPE, no permutation):
  - RMSNorm: x / sqrt(mean(x^2) + eps) * w
  - RoPE inverse frequencies theta^(-2i/d); rope_scaling "llama3" (Llama 3.1 report and
    transformers' _compute_llama3_parameters) and "linear" adjust them; Phi-3 "longrope"/"su"
    divides them by long_factor when the sequence is longer than original_max_position_embeddings,
    else by short_factor, and multiplies cos and sin by the attention factor
    sqrt(1 + ln(max_position_embeddings / original) / ln(original)) (Phi-3 technical report,
    transformers' _compute_longrope_parameters)
  - Phi-3's fused self_attn.qkv_proj (rows q, k, v) and mlp.gate_up_proj (rows gate, up)
  - grouped-query causal attention with softmax(q k^T / sqrt(head_dim))
  - SwiGLU MLP down(silu(gate(x)) * up(x)); the head tied to the embedding when asked

Usage: llama_forward.py FOLDER TOKENS OUT
  TOKENS: comma-separated ids; OUT: raw little-endian float64 logits [len(TOKENS)][vocab].
Nothing here is shared with the C++ code under test.
"""
import json
import math
import struct
import sys

import torch

DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        a, b = info["data_offsets"]
        raw = bytearray(data[base + a : base + b])
        t = torch.frombuffer(raw, dtype=DTYPES[info["dtype"]]) if raw else torch.zeros(0)
        out[name] = t.reshape(info["shape"]).to(torch.float64)
    return out


def inverse_frequencies(cfg, head_dim, seq_len):
    """(inverse frequencies, the factor cos and sin are multiplied by)."""
    theta = float(cfg.get("rope_theta", 10000.0))
    inv = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim))
    rs = cfg.get("rope_scaling")
    if not rs:
        return inv, 1.0
    kind = rs.get("rope_type", rs.get("type"))
    if kind == "linear":
        return inv / rs["factor"], 1.0
    if kind in ("longrope", "su"):
        orig = cfg.get("original_max_position_embeddings") or rs["original_max_position_embeddings"]
        ext = rs["long_factor"] if seq_len > orig else rs["short_factor"]
        scale = cfg["max_position_embeddings"] / orig
        mscale = rs.get("attention_factor")
        if mscale is None:
            mscale = 1.0 if scale <= 1.0 else math.sqrt(1 + math.log(scale) / math.log(orig))
        return inv / torch.tensor(ext, dtype=torch.float64), mscale
    if kind == "llama3":
        factor = rs["factor"]
        low, high = rs["low_freq_factor"], rs["high_freq_factor"]
        old = rs["original_max_position_embeddings"]
        low_wavelen, high_wavelen = old / low, old / high
        wavelen = 2 * math.pi / inv
        scaled = torch.where(wavelen > low_wavelen, inv / factor, inv)
        smooth = (old / wavelen - low) / (high - low)
        blended = (1 - smooth) * scaled / factor + smooth * scaled
        medium = (wavelen >= high_wavelen) & (wavelen <= low_wavelen)
        return torch.where(medium, blended, scaled), 1.0
    raise SystemExit("rope_scaling type %r is not implemented by the reference" % kind)


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def main():
    folder, tokens, out_path = sys.argv[1], [int(t) for t in sys.argv[2].split(",")], sys.argv[3]
    with open(folder + "/config.json") as f:
        cfg = json.load(f)
    w = read_safetensors(folder + "/model.safetensors")
    dim = cfg["hidden_size"]
    n_heads = cfg["num_attention_heads"]
    n_kv = cfg.get("num_key_value_heads", n_heads)
    hd = cfg.get("head_dim", dim // n_heads)
    eps = cfg["rms_norm_eps"]
    T = len(tokens)

    def norm(x, weight):
        return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * weight

    inv, mscale = inverse_frequencies(cfg, hd, T)
    angles = torch.arange(T, dtype=torch.float64)[:, None] * inv[None, :]
    emb = torch.cat((angles, angles), dim=-1)
    cos, sin = emb.cos()[:, None, :] * mscale, emb.sin()[:, None, :] * mscale

    x = w["model.embed_tokens.weight"][torch.tensor(tokens)]
    mask = torch.full((T, T), float("-inf"), dtype=torch.float64).triu(1)
    for layer in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % layer
        h = norm(x, w[p + "input_layernorm.weight"])
        if p + "self_attn.qkv_proj.weight" in w:
            qkv = h @ w[p + "self_attn.qkv_proj.weight"].T
            q, k, v = torch.split(qkv, [n_heads * hd, n_kv * hd, n_kv * hd], dim=-1)
        else:
            q = h @ w[p + "self_attn.q_proj.weight"].T
            k = h @ w[p + "self_attn.k_proj.weight"].T
            v = h @ w[p + "self_attn.v_proj.weight"].T
            if p + "self_attn.q_proj.bias" in w:  # Qwen2
                q = q + w[p + "self_attn.q_proj.bias"]
                k = k + w[p + "self_attn.k_proj.bias"]
                v = v + w[p + "self_attn.v_proj.bias"]
        q, k, v = q.reshape(T, n_heads, hd), k.reshape(T, n_kv, hd), v.reshape(T, n_kv, hd)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        rep = n_heads // n_kv
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
        scores = torch.einsum("thd,shd->hts", q, k) / math.sqrt(hd) + mask
        att = torch.softmax(scores, dim=-1)
        o = torch.einsum("hts,shd->thd", att, v).reshape(T, n_heads * hd)
        x = x + o @ w[p + "self_attn.o_proj.weight"].T
        h = norm(x, w[p + "post_attention_layernorm.weight"])
        if p + "mlp.gate_up_proj.weight" in w:
            gate, up = (h @ w[p + "mlp.gate_up_proj.weight"].T).chunk(2, dim=-1)
        else:
            gate = h @ w[p + "mlp.gate_proj.weight"].T
            up = h @ w[p + "mlp.up_proj.weight"].T
        x = x + (torch.nn.functional.silu(gate) * up) @ w[p + "mlp.down_proj.weight"].T
    x = norm(x, w["model.norm.weight"])
    head = w.get("lm_head.weight", w["model.embed_tokens.weight"])
    logits = x @ head.T
    with open(out_path, "wb") as f:
        f.write(logits.contiguous().numpy().astype("<f8").tobytes())


if __name__ == "__main__":
    main()
