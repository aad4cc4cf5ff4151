#include "matmul.hpp"

#include <string>
#include <vector>

#include "switchyard/quant.hpp"

namespace sy::cpu {

Status matmul_check(StorageType w_type, int64_t k, const DotKernel& kern) {
  if (!kern.usable())
    return error::unsupported("cpu: no matmul kernel for weights of type " + std::string(storage_type_name(w_type)));
  if (k % storage_type_info(w_type).block_size != 0)
    return error::invalid_argument("cpu: matmul row length " + std::to_string(k) + " is not a multiple of " +
                                   std::string(storage_type_name(w_type)) + "'s block size");
  return Status::ok();
}

Status rows_not_grouped(StorageType w_type, int64_t rows) {
  return error::invalid_argument("cpu: " + std::string(storage_type_name(w_type)) + " weights come in groups of " +
                                 std::to_string(interleave_rows(w_type)) + " rows, but the matrix has " +
                                 std::to_string(rows));
}

bool can_share_activations(StorageType a, StorageType b, Isa isa) {
  const DotKernel ka = dot_kernel(a, isa), kb = dot_kernel(b, isa);
  return ka.usable() && kb.usable() && ka.act_type == kb.act_type && ka.quantize_act == kb.quantize_act;
}

size_t matmul_scratch_bytes(StorageType w_type, int64_t k, int64_t m, Isa isa) {
  const auto kern = dot_kernel(w_type, isa);
  if (!kern.usable()) return 0;
  return act_row_bytes(kern, k) * static_cast<size_t>(m);
}

namespace {

// One or two products (a gate/up pair) of the same input.
Status products(std::span<const MatmulArgs> a, const Glu& glu, Isa isa, ThreadPool& pool, void* scratch) {
  GemmPlan p;
  if (auto st = plan_products(a, glu, isa, p); !st) return st;
  auto* act = static_cast<uint8_t*>(scratch);
  convert_rows(p.kern[0], p.k, a[0].m, [&](int64_t i) { return a[0].x + i * p.k; }, act, p.a_stride, pool);
  GemmBlock b;
  for (size_t q = 0; q < a.size(); ++q) b.w[q] = static_cast<const uint8_t*>(a[q].w);
  b.act = act;
  b.m = a[0].m;
  run_gemm_blocks(p, {&b, 1}, pool);
  return Status::ok();
}

}  // namespace

Status matmul(const MatmulArgs& a, Isa isa, ThreadPool& pool, void* scratch) {
  return products({&a, 1}, Glu{}, isa, pool, scratch);
}

Status matmul_gate_up(const MatmulArgs& gate, const MatmulArgs& up, const Glu& glu, Isa isa, ThreadPool& pool,
                      void* scratch) {
  if (gate.x != up.x || gate.k != up.k || gate.rows != up.rows || gate.m != up.m)
    return error::invalid_argument("cpu: matmul_gate_up: gate and up must share the input and their shapes");
  if (!can_share_activations(gate.w_type, up.w_type, isa))
    return error::invalid_argument("cpu: matmul_gate_up: " + std::string(storage_type_name(gate.w_type)) + " and " +
                                   std::string(storage_type_name(up.w_type)) +
                                   " weights convert activations differently; run two matmuls");
  const MatmulArgs both[] = {gate, up};
  return products(both, glu, isa, pool, scratch);
}

Status matmul_reference(const MatmulArgs& a) {
  DotKernel kern = dot_kernel_scalar(a.w_type);
  if (!kern.usable()) kern = dot_kernel_generic(a.w_type, Isa::scalar);
  if (auto st = matmul_check(a.w_type, a.k, kern); !st) return st;
  const size_t w_row = *storage_row_bytes(a.w_type, static_cast<uint64_t>(a.k));
  if (a.rows % interleave_rows(a.w_type) != 0) return rows_not_grouped(a.w_type, a.rows);
  std::vector<uint8_t> act(act_row_bytes(kern, a.k));
  for (int64_t i = 0; i < a.m; ++i) {
    kern.quantize_act(a.k, a.x + i * a.k, act.data());
    const auto* w = static_cast<const uint8_t*>(a.w);
    float* y = a.y + i * a.rows;
    if (kern.group1)
      for (int64_t r = 0; r < a.rows; r += 16) {
        float* const o[1] = {y + r};
        kern.group1(a.k, w + static_cast<size_t>(r) * w_row, act.data(), 0, o);
      }
    else
      for (int64_t r = 0; r < a.rows; ++r) y[r] = row_dot(kern, a.k, w + static_cast<size_t>(r) * w_row, act.data());
  }
  return Status::ok();
}

}  // namespace sy::cpu
