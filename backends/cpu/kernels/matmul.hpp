// Matrix multiplication of a weight matrix in any supported storage type with f32
// activations: Y[m][r] = sum_k W[r][k] * X[m][k]. Activations are converted once to the
// weight type's dot type; weight rows are split across threads in chunks, and each chunk
// is applied to a tile of activation rows while it is in cache (GEMV when m == 1).
#pragma once

#include <cstdint>

#include "dot.hpp"
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

/// Bytes of scratch matmul() needs for these shapes.
size_t matmul_scratch_bytes(StorageType w_type, int64_t k, int64_t m, Isa isa);

/// The scalar reference: one thread, scalar kernels, no tiling.
Status matmul_reference(const MatmulArgs& a);

}  // namespace sy::cpu
