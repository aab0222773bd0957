#include "engine/runtime/executor.h"

#include "engine/core/memory_budget.h"
#include "engine/kv/paged_kv.h"
#include "engine/runtime/cpu/qkernels.h"

using edge::model::LlamaConfig;

namespace edge::runtime {

std::string describe_memory(const ExecutorMemory& m) {
    std::string s = "weights " + format_memory_size(m.weight_bytes ? m.weight_bytes : m.mapped_weight_bytes) +
                    (m.weight_bytes ? (m.device_total ? " on the device" : " held") : " mapped in place") +
                    ", scratch " + format_memory_size(m.scratch_bytes);
    if (m.kv_bytes) s += ", KV pool " + format_memory_size(m.kv_bytes);
    if (m.device_total)
        s += ", device " + format_memory_size(m.device_total - m.device_free) + " used of " +
             format_memory_size(m.device_total);
    return s;
}

std::string cpu_kernels_and_threads(int threads) {
    return std::string(qkernels::kernel_name()) + " kernels, " + std::to_string(threads) +
           (threads == 1 ? " thread" : " threads");
}

Result<BatchLayout> plan_batch(const kv::PagedKv& kv, std::span<const PagedStep> batch, const LlamaConfig& c,
                               int max_seq, const char* who) {
    const kv::KvShape& sh = kv.shape();
    if (sh.n_layers != c.n_layers || sh.n_kv_heads != c.n_kv_heads || sh.head_dim != c.head_dim)
        return err(who, ": paged KV cache shape (", sh.n_layers, " layers, ", sh.n_kv_heads, " KV heads x ",
                   sh.head_dim, ") does not match the model (", c.n_layers, " layers, ", c.n_kv_heads, " KV heads x ",
                   c.head_dim, ")");
    if (batch.empty()) return err(who, ": paged forward: empty batch");
    BatchLayout L;
    L.start.resize(batch.size());
    L.first.resize(batch.size());
    for (size_t i = 0; i < batch.size(); ++i) {
        const PagedStep& st = batch[i];
        if (st.tokens.empty()) return err(who, ": paged forward: sequence ", st.seq, " has no tokens in this step");
        for (size_t j = 0; j < i; ++j)
            if (batch[j].seq == st.seq)
                return err(who, ": paged forward: sequence ", st.seq, " appears twice in one batch");
        L.start[i] = kv.seq_len(st.seq);
        if (int64_t(L.start[i]) + int64_t(st.tokens.size()) > max_seq)
            return err(who, ": paged forward: sequence ", st.seq, " would reach ",
                       int64_t(L.start[i]) + int64_t(st.tokens.size()), " tokens, past the executor's maximum of ",
                       max_seq);
        L.blocks_needed += kv.blocks_needed(st.seq, int64_t(st.tokens.size()));
        L.first[i] = L.rows;
        L.rows += int(st.tokens.size());
        L.out_first.push_back(L.out_rows);
        L.out_rows += st.all_logits ? int(st.tokens.size()) : 1;
    }
    if (L.blocks_needed > kv.free_blocks())
        return err(who, ": KV budget exhausted: the batch needs ", L.blocks_needed, " new blocks, ", kv.free_blocks(),
                   " free of ", kv.total_blocks());
    L.row_item.resize(size_t(L.rows));
    L.row_pos.resize(size_t(L.rows));
    for (size_t i = 0, t = 0; i < batch.size(); ++i)
        for (size_t j = 0; j < batch[i].tokens.size(); ++j, ++t) {
            L.row_item[t] = int(i);
            L.row_pos[t] = L.start[i] + int(j);
        }
    return L;
}

std::vector<int> logit_rows(std::span<const PagedStep> batch, const BatchLayout& L) {
    std::vector<int> rows;
    rows.reserve(size_t(L.out_rows));
    for (size_t i = 0; i < batch.size(); ++i) {
        const int n = int(batch[i].tokens.size());
        for (int j = batch[i].all_logits ? 0 : n - 1; j < n; ++j) rows.push_back(L.first[i] + j);
    }
    return rows;
}

}  // namespace edge::runtime
