// Attention of query tokens over a KV cache whose rows (one per position and KV head) are
// stored in f32, f16, q8_0 or q4_0. Causal by position; grouped-query (query head h reads
// KV head h / (n_heads / n_kv_heads)).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "dot.hpp"
#include "ops.hpp"
#include "thread_pool.hpp"

namespace sy::cpu {

/// A cache of rows of `dim` elements: row (slot * n_kv_heads + head), where the slot of
/// position p is p itself (contiguous), or for a paged cache
/// block_table[p / block_size] * block_size + p % block_size.
struct KvRows {
  const void* data = nullptr;
  StorageType type = StorageType::F16;
  int64_t dim = 0;
  int64_t n_kv_heads = 0;
  int64_t n_ctx = 0;  ///< positions present (0 .. n_ctx-1)
  std::span<const int32_t> block_table;  ///< empty: contiguous
  int64_t block_size = 0;

  /// The storage slot holding position p.
  [[nodiscard]] int64_t slot(int64_t p) const {
    return block_table.empty() ? p : block_table[static_cast<size_t>(p / block_size)] * block_size + p % block_size;
  }
};

struct AttentionArgs {
  View q;                            ///< [head_dim, n_heads, n_q]
  KvRows k, v;
  std::span<const int32_t> q_pos;    ///< position of each query; it sees keys at positions <= its own
  float scale = 1.f;                 ///< usually 1/sqrt(head_dim)
  View out;                          ///< [v.dim, n_heads, n_q]
};

/// Per-thread working memory of attention(), kept by the caller so calls reuse it.
struct AttentionScratch {
  struct alignas(64) PerThread {
    std::vector<float> qf, vtile, acc, s, m, l;
    std::vector<uint8_t> qa;
  };
  std::vector<PerThread> threads;
};

/// Flash-style: keys in tiles with an online softmax, so no n_ctx-sized score buffer;
/// scores through the dot kernels (q converted to the K type's dot type, as llama.cpp's CPU
/// path does). A task takes a block of queries and the query heads of one KV head, so each
/// tile of V rows is converted once for all of them; each (query, head) output is computed
/// by one thread in the same order whatever the thread count.
Status attention(const AttentionArgs& a, Isa isa, ThreadPool& pool, AttentionScratch& scratch);
/// The same with scratch memory of its own.
Status attention(const AttentionArgs& a, Isa isa, ThreadPool& pool);

/// Reference: the same scores, a full softmax per (query, head), one thread.
Status attention_reference(const AttentionArgs& a);

}  // namespace sy::cpu
