// The kernels' host entry points, defined in the .cu files: each queues its kernel(s) on
// `stream`, reading the record at `rec` (device memory) and sizing the grid from `host`, the
// same record in host memory. They return the launch's CUDA error code (0 = queued).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/record.hpp"

struct CUstream_st;

namespace sy::cuda {

using Stream = CUstream_st*;

/// Limits the kernels are written for; the supports() side refuses anything beyond them.
constexpr int64_t kMaxRankRow = 4096;   ///< top_k / argsort row length (each element ranked against its row)
constexpr int64_t kMaxHeadK = 1024;     ///< attention: query/key head size (a shared-memory query row)
constexpr int64_t kMaxHeadV = 512;      ///< attention: value head size (16 accumulators a lane)
constexpr int64_t kMaxConvTaps = 16;    ///< conv1d kernel width (a per-thread window)

/// Element-wise ops (elementwise.cu). `which` picks the function.
enum class Unary : int { silu, gelu, sigmoid, softplus, scale };
int launch_unary(Unary which, const NodeRecord* rec, const NodeRecord& host, Stream stream);
int launch_binary_add(const NodeRecord* rec, const NodeRecord& host, Stream stream);
int launch_binary_mul(const NodeRecord* rec, const NodeRecord& host, Stream stream);
int launch_swiglu(const NodeRecord* rec, const NodeRecord& host, Stream stream);

/// Row-wise ops (norm.cu).
enum class RowOp : int { rms_norm, l2_norm, softmax };
int launch_rows(RowOp which, const NodeRecord* rec, const NodeRecord& host, Stream stream);

/// Rotary embeddings (rope.cu).
int launch_rope(const NodeRecord* rec, const NodeRecord& host, Stream stream);

/// Routing and data ops (routing.cu). launch_rank writes the first k ranks of each row of
/// source 0 (top_k; k = the row length: argsort).
int launch_rank(const NodeRecord* rec, const NodeRecord& host, int64_t k, Stream stream);
int launch_expert_weights(const NodeRecord* rec, const NodeRecord& host, Stream stream);
int launch_moe_combine(const NodeRecord* rec, const NodeRecord& host, Stream stream);
int launch_concat(const NodeRecord* rec, const NodeRecord& host, Stream stream);

/// Weights of any type dequant.cuh decodes (matmul.cu).
int launch_matmul(const NodeRecord* rec, const NodeRecord& host, Stream stream);
int launch_matmul_id(const NodeRecord* rec, const NodeRecord& host, Stream stream);
int launch_get_rows(const NodeRecord* rec, const NodeRecord& host, Stream stream);

/// The q8 path for the legacy 32-element types and the K-quants (matmul_q8.cu): the
/// activations quantized into the record's scratch (kAct32Bytes per 32 elements, kActKBytes
/// per 256), then integer dot products.
constexpr size_t kAct32Bytes = 40;
constexpr size_t kActKBytes = 324;
bool q8_weight_type(uint32_t type);
size_t q8_scratch_bytes(const NodeRecord& host);
int launch_matmul_q8(const NodeRecord* rec, const NodeRecord& host, Stream stream);
int launch_matmul_id_q8(const NodeRecord* rec, const NodeRecord& host, Stream stream);

/// The batched path (matmul_mma.cu): weights dequantized to f16 in shared memory, f16
/// activations, tensor cores; matmul_id sorts its pairs by expert into the record's scratch.
bool mma_weight_type(uint32_t type);
size_t mma_id_scratch_bytes(const NodeRecord& host);
int launch_matmul_mma(const NodeRecord* rec, const NodeRecord& host, Stream stream);
int launch_matmul_id_mma(const NodeRecord* rec, const NodeRecord& host, Stream stream);

/// The KV cache (cache.cu).
int launch_set_rows(const NodeRecord* rec, const NodeRecord& host, Stream stream);
int launch_attention(const NodeRecord* rec, const NodeRecord& host, Stream stream);

/// Conversions and data ops (data.cu).
int launch_copy(const NodeRecord* rec, const NodeRecord& host, Stream stream);
int launch_gather_cols(const NodeRecord* rec, const NodeRecord& host, Stream stream);
int launch_fp8_qdq(const NodeRecord* rec, const NodeRecord& host, Stream stream);

/// Recurrent ops (recurrent.cu).
int launch_conv1d(const NodeRecord* rec, const NodeRecord& host, Stream stream);
int launch_delta_net(const NodeRecord* rec, const NodeRecord& host, Stream stream);

}  // namespace sy::cuda
