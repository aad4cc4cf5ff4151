// The KV cache ops over every cache type: set_rows into a cache whose other rows must stay
// as they were, and paged attention with GQA, several sequences in one call (each with its
// own block-table row, blocks out of order), one query at a late position, and an MLA-shaped
// cache (one KV head, keys wider than values, a head size that is not a multiple of 32).
#include <cmath>
#include <string>

#include "conformance/case_builder.hpp"

namespace sy::conformance::detail {
namespace {

bool block32(StorageType t) { return storage_type_info(t).block_size == 32; }

void set_rows(std::vector<Case>& out, StorageType t, int64_t hd, const std::vector<int32_t>& slots, Layout l) {
  const int64_t kvh = 2, cells = 9, m = static_cast<int64_t>(slots.size());
  std::string shape = "head " + std::to_string(hd) + ", kv heads 2, " + std::to_string(cells) + " cells, " +
                      std::to_string(m) + " rows";
  if (l != Layout::contiguous) shape += std::string("; rows ") + layout_name(l);
  Builder b(OpKind::set_rows, t, "F32 -> " + type_name(t), shape);
  const int32_t rows = b.f32({hd * kvh, m}, l, 1.0, "rows");
  const int32_t s = b.ints(slots, {m}, "slots");
  const int32_t cache = b.typed(t, {hd, kvh, cells}, 1.0, "cache");
  out.push_back(b.finish({rows, s}, cache));
}

struct Attn {
  const char* what;
  int64_t head_k, head_v, heads, kv_heads, block;
  std::vector<int32_t> pos, seq;  // per query token
  Dims tables;                    // [blocks, sequences]
  std::vector<int32_t> table;
  Layout q_layout;
};

void attention(std::vector<Case>& out, StorageType t, const Attn& a) {
  const auto tokens = static_cast<int64_t>(a.pos.size());
  const int64_t cells = a.block * static_cast<int64_t>(a.table.size());  // every block the tables name exists
  std::string shape = std::string(a.what) + ": head " + std::to_string(a.head_k) +
                      (a.head_v != a.head_k ? "/" + std::to_string(a.head_v) : "") + ", heads " +
                      std::to_string(a.heads) + "/" + std::to_string(a.kv_heads) + ", block " + std::to_string(a.block) +
                      ", tokens " + std::to_string(tokens);
  if (a.q_layout != Layout::contiguous) shape += std::string("; q ") + layout_name(a.q_layout);
  Builder b(OpKind::attention, t, "F32 x " + type_name(t), shape);
  const int32_t q = b.f32({a.head_k, a.heads, tokens}, a.q_layout, 1.0, "q");
  const int32_t k = b.typed(t, {a.head_k, a.kv_heads, cells}, 1.0, "k cache");
  const int32_t v = b.typed(t, {a.head_v, a.kv_heads, cells}, 1.0, "v cache");
  const int32_t pos = b.ints(a.pos, {tokens}, "positions");
  const int32_t seq = b.ints(a.seq, {tokens}, "seq rows");
  const int32_t tab = b.ints(a.table, a.tables, "block tables");
  const int32_t d = b.dst(StorageType::F32, {a.head_v, a.heads, tokens});
  out.push_back(b.finish({q, k, v, pos, seq, tab}, d, {static_cast<int32_t>(a.block)},
                         {static_cast<float>(1.0 / std::sqrt(static_cast<double>(a.head_k)))}));
}

}  // namespace

void add_cache_cases(std::vector<Case>& out) {
  for (const StorageType t : case_types(OpKind::set_rows)) {
    set_rows(out, t, 64, {6}, Layout::contiguous);
    set_rows(out, t, 64, {0, 8, 3, 5}, Layout::strided);
    if (!block32(t)) set_rows(out, t, 16, {2, 7, 1}, Layout::contiguous);  // llama fixtures' head size
  }
  const Attn decode{"one query", 64, 64, 4, 2, 16, {37}, {0}, {3, 1}, {2, 0, 1}, Layout::contiguous};
  // Two sequences: a prompt from position 0 (causal within the batch), and three tokens
  // after 20 cached ones. Table rows: sequence 0 uses blocks 3, 1; sequence 1 blocks 0, 2.
  const Attn batch{"two sequences", 64, 64, 4, 2, 16, {0, 1, 2, 3, 4, 20, 21, 22}, {0, 0, 0, 0, 0, 1, 1, 1},
                   {2, 2}, {3, 1, 0, 2}, Layout::strided};
  // deepseek2's MLA as the graph runs it: latent keys (96 + 16 rope dims), latent values.
  const Attn mla{"MLA", 112, 96, 4, 1, 8, {10, 11, 12}, {0, 0, 0}, {2, 1}, {1, 0}, Layout::contiguous};
  for (const StorageType t : case_types(OpKind::attention)) {
    attention(out, t, decode);
    attention(out, t, batch);
    if (!block32(t)) attention(out, t, mla);
  }
}

}  // namespace sy::conformance::detail
