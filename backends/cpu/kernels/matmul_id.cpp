#include "matmul_id.hpp"

#include <cstring>
#include <string>
#include <vector>

namespace sy::cpu {
namespace {

Status check_ids(const MatmulIdArgs& a) {
  if (a.n_used < 1 || a.n_tokens < 0)
    return error::invalid_argument("cpu: matmul_id: " + std::to_string(a.n_used) +
                                   " experts per token; expected at least 1");
  if (a.x_slots != 1 && a.x_slots != a.n_used)
    return error::invalid_argument("cpu: matmul_id: the input has " + std::to_string(a.x_slots) +
                                   " slots; expected 1 or n_used = " + std::to_string(a.n_used));
  if (a.ids.size() != static_cast<size_t>(a.n_used * a.n_tokens))
    return error::invalid_argument("cpu: matmul_id: expected n_used x n_tokens expert ids");
  for (int64_t t = 0; t < a.n_tokens; ++t)
    for (int64_t j = 0; j < a.n_used; ++j) {
      const int32_t e = a.ids[static_cast<size_t>(j + t * a.n_used)];
      if (e < 0 || e >= a.n_experts)
        return error::invalid_argument("cpu: matmul_id: token " + std::to_string(t) + " slot " + std::to_string(j) +
                                       " routes to expert " + std::to_string(e) + ", but there are " +
                                       std::to_string(a.n_experts));
    }
  return Status::ok();
}

const float* input_row(const MatmulIdArgs& a, int64_t j, int64_t t) {
  return a.x + (t * a.x_slots + (a.x_slots == 1 ? 0 : j)) * a.k;
}

// Groups the pairs by expert (a counting sort, token order kept inside each group).
void group_pairs(const MatmulIdArgs& a, MatmulIdScratch& s) {
  const auto n_pairs = static_cast<size_t>(a.n_used * a.n_tokens);
  s.start.assign(static_cast<size_t>(a.n_experts) + 1, 0);
  for (size_t p = 0; p < n_pairs; ++p) ++s.start[static_cast<size_t>(a.ids[p]) + 1];
  for (size_t e = 1; e < s.start.size(); ++e) s.start[e] += s.start[e - 1];
  s.order.resize(n_pairs);
  s.pos.resize(n_pairs);
  // start[e] serves as group e's fill cursor, so afterwards it holds where the group ends:
  // group e is [start[e - 1], start[e]) (from 0 for the first).
  for (size_t p = 0; p < n_pairs; ++p) {
    const auto q = static_cast<size_t>(s.start[static_cast<size_t>(a.ids[p])]++);
    s.order[q] = static_cast<int64_t>(p);
    s.pos[p] = static_cast<int64_t>(q);
  }
}

// Converts every input row once, into the place of the first pair that reads it, and
// copies the converted row to the places of the others (a shared input is read by all
// n_used pairs of its token).
void convert_inputs(const MatmulIdArgs& a, const DotKernel& kern, size_t a_row, MatmulIdScratch& s, ThreadPool& pool) {
  const int64_t readers = a.x_slots == 1 ? a.n_used : 1;
  const auto one = [&](int64_t src, int) {
    const int64_t first = src * readers;  // pair index of the first reader
    const int64_t t = first / a.n_used, j = first % a.n_used;
    uint8_t* dst = s.act.data() + static_cast<size_t>(s.pos[static_cast<size_t>(first)]) * a_row;
    kern.quantize_act(a.k, input_row(a, j, t), dst);
    for (int64_t r = 1; r < readers; ++r)
      std::memcpy(s.act.data() + static_cast<size_t>(s.pos[static_cast<size_t>(first + r)]) * a_row, dst, a_row);
  };
  const int64_t rows = a.x_slots * a.n_tokens;
  constexpr int64_t kParallelElements = int64_t{1} << 15;
  if (rows * a.k < kParallelElements)
    for (int64_t i = 0; i < rows; ++i) one(i, 0);
  else
    pool.run(rows, one);
}

// One or two products (gate and up) over the same input and ids.
Status products(std::span<const MatmulIdArgs> a, const Glu& glu, Isa isa, ThreadPool& pool, MatmulIdScratch& s) {
  const MatmulIdArgs& a0 = a[0];
  if (auto st = check_ids(a0); !st) return st;
  GemmPlan p;
  if (auto st = plan_products(a, glu, isa, p); !st) return st;

  group_pairs(a0, s);
  const size_t need = s.order.size() * p.a_stride;
  if (s.act.size() < need) s.act.resize(need);
  convert_inputs(a0, p.kern[0], p.a_stride, s, pool);

  if (s.blocks.capacity() < static_cast<size_t>(a0.n_experts)) s.blocks.reserve(static_cast<size_t>(a0.n_experts));
  s.blocks.clear();
  for (int64_t e = 0; e < a0.n_experts; ++e) {
    const int64_t begin = e == 0 ? 0 : s.start[static_cast<size_t>(e - 1)], end = s.start[static_cast<size_t>(e)];
    if (begin == end) continue;
    GemmBlock b;
    for (size_t q = 0; q < a.size(); ++q)
      b.w[q] = static_cast<const uint8_t*>(a[q].w) + static_cast<size_t>(e * a0.rows) * p.w_row[q];
    b.act = s.act.data() + static_cast<size_t>(begin) * p.a_stride;
    b.m = end - begin;
    b.out = s.order.data() + begin;
    s.blocks.push_back(b);
  }
  run_gemm_blocks(p, s.blocks, pool);
  return Status::ok();
}

}  // namespace

Status matmul_id(const MatmulIdArgs& a, Isa isa, ThreadPool& pool, MatmulIdScratch& s) {
  return products({&a, 1}, Glu{}, isa, pool, s);
}

Status matmul_id(const MatmulIdArgs& a, Isa isa, ThreadPool& pool) {
  MatmulIdScratch s;
  return matmul_id(a, isa, pool, s);
}

Status matmul_id_gate_up(const MatmulIdArgs& gate, const MatmulIdArgs& up, const Glu& glu, Isa isa, ThreadPool& pool,
                         MatmulIdScratch& s) {
  if (gate.x != up.x || gate.x_slots != up.x_slots || gate.ids.data() != up.ids.data() ||
      gate.ids.size() != up.ids.size() || gate.k != up.k || gate.rows != up.rows || gate.n_experts != up.n_experts ||
      gate.n_used != up.n_used || gate.n_tokens != up.n_tokens)
    return error::invalid_argument("cpu: matmul_id_gate_up: gate and up must share the input, the ids and their shapes");
  if (!can_share_activations(gate.w_type, up.w_type, isa))
    return error::invalid_argument("cpu: matmul_id_gate_up: " + std::string(storage_type_name(gate.w_type)) + " and " +
                                   std::string(storage_type_name(up.w_type)) +
                                   " weights convert activations differently; run two matmul_ids");
  const MatmulIdArgs both[] = {gate, up};
  return products(both, glu, isa, pool, s);
}

Status matmul_id_reference(const MatmulIdArgs& a) {
  if (auto st = check_ids(a); !st) return st;
  const size_t w_row = *storage_row_bytes(a.w_type, static_cast<uint64_t>(a.k));
  for (int64_t t = 0; t < a.n_tokens; ++t)
    for (int64_t j = 0; j < a.n_used; ++j) {
      const int64_t e = a.ids[static_cast<size_t>(j + t * a.n_used)];
      MatmulArgs mm{static_cast<const uint8_t*>(a.w) + static_cast<size_t>(e * a.rows) * w_row, a.w_type, a.k,
                    a.rows, input_row(a, j, t), 1, a.y + (j + t * a.n_used) * a.rows};
      if (auto st = matmul_reference(mm); !st) return st;
    }
  return Status::ok();
}

}  // namespace sy::cpu
