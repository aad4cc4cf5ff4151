// matmul, matmul_id and get_rows over every weight type the CPU computes. Row lengths are
// whole blocks (the type requires it) but not multiples of 64 where the block allows:
// 73 for plain types, 96 (three blocks) for 32-blocks, 512 (two blocks) for 256-blocks.
// Output rows are odd, and token counts cover 1 (matrix-vector kernels), a few, and 33 or
// 40 (past the usual tile and the batch threshold of batched kernels).
#include <cmath>

#include "conformance/case_builder.hpp"

namespace sy::conformance::detail {
namespace {

int64_t row_length(StorageType t) {
  switch (storage_type_info(t).block_size) {
    case 1: return 73;
    case 32: return 96;
    default: return 512;
  }
}

std::string dims(const Dims& ne) {
  std::string s;
  for (int64_t n : ne) s += (s.empty() ? "" : "x") + std::to_string(n);
  return s;
}

void matmul(std::vector<Case>& out, StorageType t, int64_t rows, const Dims& m) {
  const int64_t k = row_length(t);
  Builder b(OpKind::matmul, t, type_name(t) + " x F32", "k " + std::to_string(k) + ", rows " + std::to_string(rows) +
                                                          ", m " + dims(m));
  const int32_t w = b.typed(t, {k, rows}, 1.0 / std::sqrt(static_cast<double>(k)), "W");
  const int64_t m1 = m[0], m2 = m.size() > 1 ? m[1] : 1;
  const int32_t x = b.f32({k, m1, m2}, Layout::contiguous, 1.0, "X");
  const int32_t y = b.dst(StorageType::F32, {rows, m1, m2});
  out.push_back(b.finish({w, x}, y));
}

void matmul_id(std::vector<Case>& out, StorageType t, int64_t slots, int64_t tokens) {
  const int64_t k = row_length(t), rows = 21, experts = 5, used = 2;
  Builder b(OpKind::matmul_id, t, type_name(t) + " x F32",
            "k " + std::to_string(k) + ", rows " + std::to_string(rows) + ", " + std::to_string(experts) +
                " experts, " + std::to_string(used) + " used, x slots " + std::to_string(slots) + ", tokens " +
                std::to_string(tokens));
  const int32_t w = b.typed(t, {k, rows, experts}, 1.0 / std::sqrt(static_cast<double>(k)), "W");
  const int32_t x = b.f32({k, slots, tokens}, Layout::contiguous, 1.0, "X");
  const int32_t ids = b.ints(distinct_ids(b.rng(), used, experts, tokens), {used, tokens}, "ids");
  const int32_t y = b.dst(StorageType::F32, {rows, used, tokens});
  out.push_back(b.finish({w, x, ids}, y));
}

void get_rows(std::vector<Case>& out, StorageType t, const std::vector<int32_t>& ids, const Dims& m) {
  const int64_t k = row_length(t), n = 13;
  Builder b(OpKind::get_rows, t, type_name(t), "k " + std::to_string(k) + ", " + std::to_string(n) + " rows, ids " + dims(m));
  const int32_t table = b.typed(t, {k, n}, 1.0, "table");
  const int64_t m1 = m[0], m2 = m.size() > 1 ? m[1] : 1;
  const int32_t id = b.ints(ids, {m1, m2}, "ids");
  const int32_t y = b.dst(StorageType::F32, {k, m1, m2});
  out.push_back(b.finish({table, id}, y));
}

}  // namespace

void add_matmul_cases(std::vector<Case>& out) {
  for (const StorageType t : case_types(OpKind::matmul)) {
    matmul(out, t, 37, {1});
    matmul(out, t, 37, {7});
    matmul(out, t, 19, {5, 3});  // batch dimensions beyond the first
    matmul(out, t, 70, {33});
  }
  for (const StorageType t : case_types(OpKind::matmul_id)) {
    matmul_id(out, t, 1, 1);  // one token, the input shared by the experts
    matmul_id(out, t, 2, 6);  // one input row per chosen expert (the down projection)
    matmul_id(out, t, 2, 40);  // a prefill batch: experts share many tokens (batched kernels sort by expert)
  }
  for (const StorageType t : case_types(OpKind::get_rows)) {
    get_rows(out, t, {7}, {1});
    get_rows(out, t, {3, 12, 0, 3, 9, 12}, {3, 2});  // repeated ids, a 2-D id tensor
  }
}

}  // namespace sy::conformance::detail
