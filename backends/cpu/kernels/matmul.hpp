// Matrix multiplication of a weight matrix in any supported storage type with f32
// activations: Y[m][r] = sum_k W[r][k] * X[m][k]. Activations are converted once to the
// weight type's dot type; weight rows are split across threads in chunks, and each chunk
// is applied to a tile of activation rows while it is in cache (GEMV when m == 1).
#pragma once

#include <cstdint>

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

/// Bytes of scratch matmul() needs for these shapes.
size_t matmul_scratch_bytes(StorageType w_type, int64_t k, int64_t m, Isa isa);

/// The scalar reference: one thread, scalar kernels, no tiling.
Status matmul_reference(const MatmulArgs& a);

}  // namespace sy::cpu
