#include "matmul_id.hpp"

#include <string>
#include <vector>

namespace sy::cpu {
namespace {

Status check_ids(const MatmulIdArgs& a) {
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

}  // namespace

Status matmul_id(const MatmulIdArgs& a, Isa isa, ThreadPool& pool, MatmulIdScratch& s) {
  if (auto st = check_ids(a); !st) return st;
  const size_t w_row = *storage_row_bytes(a.w_type, static_cast<uint64_t>(a.k));
  // Group (slot, token) pairs by expert, keeping token order inside each group.
  if (s.pairs.size() < static_cast<size_t>(a.n_experts)) s.pairs.resize(static_cast<size_t>(a.n_experts));
  // Each list can hold every pair, so an expert chosen for the first time in a later step
  // does not allocate (steady-state decode stays off the heap).
  for (auto& p : s.pairs) {
    p.clear();
    p.reserve(static_cast<size_t>(a.n_tokens * a.n_used));
  }
  for (int64_t t = 0; t < a.n_tokens; ++t)
    for (int64_t j = 0; j < a.n_used; ++j)
      s.pairs[static_cast<size_t>(a.ids[static_cast<size_t>(j + t * a.n_used)])].push_back(j + t * a.n_used);
  for (int64_t e = 0; e < a.n_experts; ++e) {
    const auto& p = s.pairs[static_cast<size_t>(e)];
    if (p.empty()) continue;
    const auto m = static_cast<int64_t>(p.size());
    if (s.x.size() < static_cast<size_t>(m * a.k)) s.x.resize(static_cast<size_t>(m * a.k));
    if (s.y.size() < static_cast<size_t>(m * a.rows)) s.y.resize(static_cast<size_t>(m * a.rows));
    for (int64_t i = 0; i < m; ++i) {
      const float* src = input_row(a, p[static_cast<size_t>(i)] % a.n_used, p[static_cast<size_t>(i)] / a.n_used);
      std::copy(src, src + a.k, s.x.begin() + i * a.k);
    }
    const size_t need = matmul_scratch_bytes(a.w_type, a.k, m, isa);
    if (s.act.size() < need) s.act.resize(need);
    MatmulArgs mm{static_cast<const uint8_t*>(a.w) + static_cast<size_t>(e * a.rows) * w_row, a.w_type, a.k, a.rows,
                  s.x.data(), m, s.y.data()};
    if (auto st = matmul(mm, isa, pool, s.act.data()); !st) return st;
    for (int64_t i = 0; i < m; ++i)
      std::copy(s.y.begin() + i * a.rows, s.y.begin() + (i + 1) * a.rows, a.y + p[static_cast<size_t>(i)] * a.rows);
  }
  return Status::ok();
}

Status matmul_id(const MatmulIdArgs& a, Isa isa, ThreadPool& pool) {
  MatmulIdScratch s;
  return matmul_id(a, isa, pool, s);
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
