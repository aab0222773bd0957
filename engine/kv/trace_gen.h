// Synthetic KV access traces for realistic serving patterns. Each generator runs a small
// round-robin scheduler (a few request turns decode at once; each emits one trace step per
// block's worth of tokens) and writes which blocks every step reads. Deterministic per seed.
#pragma once
#include <cstdint>

#include "engine/kv/trace.h"

namespace edge::kv {

// Users coming back to old conversations (Zipf popularity) mixed with one-shot chats that never
// return; a conversation's context grows turn after turn.
Trace gen_multi_turn_chat(uint64_t seed = 1, int turns = 240);
// Many one-shot requests behind one shared system prompt (its blocks are shared by every request).
Trace gen_shared_system_prompt(uint64_t seed = 2, int requests = 200);
// Questions over a few long documents (Zipf), each question a new sequence sharing its document.
Trace gen_long_doc_qa(uint64_t seed = 3, int questions = 120);
// Uniformly random conversations and lengths: no structure for a policy to exploit.
Trace gen_random(uint64_t seed = 4, int turns = 150);

// The four, in table order.
std::vector<Trace> all_generated_traces();

}  // namespace edge::kv
