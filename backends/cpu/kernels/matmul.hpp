// Matrix multiplication of a weight matrix in any supported storage type with f32
// activations: Y[m][r] = sum_k W[r][k] * X[m][k]. Activations are converted once to the
// weight type's dot type; weight rows are split across threads in chunks, and each chunk
// is applied to a tile of activation rows while it is in cache (GEMV when m == 1).
#pragma once

#include <cstdint>
#include <span>

#include "dot.hpp"
#include "gemm_blocks.hpp"
#include "switchyard/status.hpp"
#include "thread_pool.hpp"

namespace sy::cpu {

struct MatmulArgs {
  const void* w = nullptr;      ///< rows x k weights, row-major, in w_type
  StorageType w_type = StorageType::F32;
  int64_t k = 0;                ///< elements per row (multiple of the block size)
  int64_t rows = 0;             ///< weight rows (outputs per activation row)
  const float* x = nullptr;     ///< m x k activations
  int64_t m = 1;
  float* y = nullptr;           ///< m x rows outputs
};

/// Runs the multiplication with `isa`'s kernels on `pool`. `scratch` must hold
/// matmul_scratch_bytes() bytes (the converted activations).
Status matmul(const MatmulArgs& a, Isa isa, ThreadPool& pool, void* scratch);

/// Gate and up projections of an FFN over the same input (gate.x == up.x, same shapes):
/// the activations are converted once and both products run in one parallel region; with
/// glu.fn, glu.h (m x rows) also receives glu.fn(gate, up). The weight types must convert
/// activations alike (can_share_activations); `scratch` as for matmul().
Status matmul_gate_up(const MatmulArgs& gate, const MatmulArgs& up, const Glu& glu, Isa isa, ThreadPool& pool,
                      void* scratch);

/// Whether weights of types a and b take the same converted activations on `isa`, so one
/// conversion can serve both (matmul_gate_up, matmul_id_gate_up).
bool can_share_activations(StorageType a, StorageType b, Isa isa);

/// Ok when `kern` exists and k is whole blocks of w_type; else the error matmul() returns.
Status matmul_check(StorageType w_type, int64_t k, const DotKernel& kern);

/// The error for an interleaved matrix whose rows are not whole groups.
Status rows_not_grouped(StorageType w_type, int64_t rows);

/// A plan for one or two products (a gate/up pair) of the same input: each product's kernel,
/// weight-row size and output, with the first one's shapes (MatmulArgs or MatmulIdArgs).
template <class Args>
Status plan_products(std::span<const Args> a, const Glu& glu, Isa isa, GemmPlan& p) {
  p.products = static_cast<int>(a.size());
  for (size_t q = 0; q < a.size(); ++q) {
    p.kern[q] = dot_kernel(a[q].w_type, isa);
    if (auto st = matmul_check(a[q].w_type, a[q].k, p.kern[q]); !st) return st;
    if (p.kern[q].group1 && a[q].rows % 16 != 0) return rows_not_grouped(a[q].w_type, a[q].rows);
    p.w_row[q] = *storage_row_bytes(a[q].w_type, static_cast<uint64_t>(a[q].k));
    p.y[q] = a[q].y;
  }
  p.k = a[0].k;
  p.rows = a[0].rows;
  p.a_stride = act_row_bytes(p.kern[0], p.k);
  p.glu = glu;
  return Status::ok();
}

/// Bytes of scratch matmul() needs for these shapes.
size_t matmul_scratch_bytes(StorageType w_type, int64_t k, int64_t m, Isa isa);

/// The scalar reference: one thread, scalar kernels, no tiling.
Status matmul_reference(const MatmulArgs& a);

}  // namespace sy::cpu
