// The batched path of matmul and matmul_id (prefill): weights dequantized to f16 tile by
// tile into shared memory, activations rounded to f16, products on the tensor cores (WMMA,
// 16x16x16, f32 accumulators). A block computes 64 weight rows x 64 activation columns with
// four warps of 32x32, stepping k by 32. matmul_id first sorts the (slot, token) pairs by
// expert in a one-block pass (a counting sort, stable, so a pair's place is the same every
// run), then each block takes one 64-pair tile of one expert.
//
// Numerics: f16 activations and f16 weight values (2^-11 relative each), f32 sums in the
// tensor cores' order; the conformance bounds for quantized and F16 weights allow that.
// F32 and BF16 weights keep the other paths (f16 would cut their range or precision).
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include "kernels/common.cuh"
#include "kernels/dequant.cuh"
#include "kernels/launch.hpp"

namespace sy::cuda {
namespace {

namespace wmma = nvcuda::wmma;

constexpr int BM = 64, BN = 64, BK = 32;
constexpr int LDA = BK + 8, LDB = BK + 8, LDC = BN + 4;  // padding against bank conflicts; multiples of 8 for WMMA
constexpr int kThreads = 128;                            // four warps, 2 x 2 over the tile
constexpr int kRouteThreads = 1024;

struct Smem {
  __half a[BM * LDA];  ///< weights: row m, element k
  __half b[BN * LDB];  ///< activations: column n, element k (a K x N matrix, column-major)
  float c[BM * LDC];   ///< the accumulators, row-major, for the guarded stores
  const float* x[BN];  ///< each column's activations (contiguous in k)
  float* y[BN];        ///< each column's output (row 0; rows are contiguous)
};

// The tile at (m0, columns s.x / s.y [0, ncols)) of weights starting at `w`, rows `ws` bytes apart.
__device__ void gemm_tile(uint32_t type, const uint8_t* w, int64_t ws, int64_t m0, int64_t M, int64_t K, int ncols,
                          Smem& s) {
  const int tid = threadIdx.x, warp = tid >> 5, wm = warp >> 1, wn = warp & 1;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
  for (auto& row : acc)
    for (auto& f : row) wmma::fill_fragment(f, 0.0f);

  for (int64_t k0 = 0; k0 < K; k0 += BK) {
    __syncthreads();  // the previous step's fragments are loaded
    for (int e = tid; e < BM * BK; e += kThreads) {
      const int m = e / BK, k = e % BK;
      const int64_t row = m0 + m, kk = k0 + k;
      s.a[m * LDA + k] = __float2half_rn(row < M && kk < K ? dequant(type, w + row * ws, kk) : 0.0f);
    }
    for (int e = tid; e < BN * BK; e += kThreads) {
      const int n = e / BK, k = e % BK;
      const int64_t kk = k0 + k;
      s.b[n * LDB + k] = __float2half_rn(n < ncols && kk < K ? s.x[n][kk] : 0.0f);
    }
    __syncthreads();
    for (int kk = 0; kk < BK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa[2];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb[2];
      for (int i = 0; i < 2; ++i) wmma::load_matrix_sync(fa[i], s.a + (wm * 32 + i * 16) * LDA + kk, LDA);
      for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(fb[j], s.b + (wn * 32 + j * 16) * LDB + kk, LDB);
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
    }
  }
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      wmma::store_matrix_sync(s.c + (wm * 32 + i * 16) * LDC + wn * 32 + j * 16, acc[i][j], LDC, wmma::mem_row_major);
  __syncthreads();
  // Consecutive threads write consecutive rows of one column: contiguous in the output.
  for (int e = tid; e < BM * BN; e += kThreads) {
    const int m = e % BM, n = e / BM;
    if (m0 + m < M && n < ncols) s.y[n][m0 + m] = s.c[m * LDC + n];
  }
}

// dst[:, c] = W . X[:, c] for the 64 columns of blockIdx.y and the 64 rows of blockIdx.x.
__global__ void __launch_bounds__(kThreads) matmul_mma_kernel(const NodeRecord* rp) {
  __shared__ __align__(32) Smem s;
  const NodeRecord& r = *rp;
  const int64_t M = r.ne[1][1], K = r.ne[1][0];
  const int64_t cols = r.ne[2][1] * r.ne[2][2] * r.ne[2][3], c0 = static_cast<int64_t>(blockIdx.y) * BN;
  const int ncols = static_cast<int>(cols - c0 < BN ? cols - c0 : BN);
  for (int n = threadIdx.x; n < ncols; n += kThreads) {
    const int64_t c = c0 + n;
    const int64_t c1 = c % r.ne[2][1], c2 = (c / r.ne[2][1]) % r.ne[2][2], c3 = c / (r.ne[2][1] * r.ne[2][2]);
    s.x[n] = at<const float>(r, 2, 0, c1, c2, c3);
    s.y[n] = at<float>(r, 0, 0, c1, c2, c3);
  }
  const auto* w = reinterpret_cast<const uint8_t*>(static_cast<uintptr_t>(r.addr[1]));
  gemm_tile(r.type[1], w, r.nb[1][1], static_cast<int64_t>(blockIdx.x) * BM, M, K, ncols, s);
}

// The pair sort's layout in the node's scratch (int32s).
struct Route {
  int32_t* tiles;  ///< per tile: expert, first index into order, one past its last
  int32_t* count;  ///< [0]: the number of tiles
  int32_t* order;  ///< pair indices (slot + used * token), grouped by expert, in pair order within one
  int32_t* per_expert;
  int32_t* first;  ///< experts + 1 offsets into order
};
__host__ __device__ inline int64_t max_tiles(int64_t pairs, int64_t experts) { return (pairs + BN - 1) / BN + experts; }
__host__ __device__ inline int64_t route_ints(int64_t pairs, int64_t experts) {
  return 3 * max_tiles(pairs, experts) + 1 + pairs + experts + (experts + 1);
}
__device__ Route route_of(const NodeRecord& r, int64_t pairs, int64_t experts) {
  auto* base = reinterpret_cast<int32_t*>(static_cast<uintptr_t>(r.scratch));
  Route t;
  t.tiles = base;
  t.count = t.tiles + 3 * max_tiles(pairs, experts);
  t.order = t.count + 1;
  t.per_expert = t.order + pairs;
  t.first = t.per_expert + experts;
  return t;
}

__device__ int32_t pair_id(const NodeRecord& r, int64_t p, int64_t used) {
  return *at<const int32_t>(r, 3, p % used, p / used, 0, 0);
}

// One block: count the pairs of each expert, lay out the tiles, place each pair; pairs whose
// id is out of range get zero outputs (as on the other paths).
__global__ void __launch_bounds__(kRouteThreads) route_kernel(const NodeRecord* rp) {
  const NodeRecord& r = *rp;
  const int64_t used = r.ne[3][0], pairs = used * r.ne[3][1], experts = r.ne[1][2], rows = r.ne[1][1];
  const Route t = route_of(r, pairs, experts);
  for (int64_t e = threadIdx.x; e < experts; e += blockDim.x) {
    int32_t n = 0;
    for (int64_t p = 0; p < pairs; ++p) n += pair_id(r, p, used) == e;
    t.per_expert[e] = n;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    int32_t tiles = 0;
    t.first[0] = 0;
    for (int64_t e = 0; e < experts; ++e) {
      t.first[e + 1] = t.first[e] + t.per_expert[e];
      for (int32_t s = t.first[e]; s < t.first[e + 1]; s += BN) {
        t.tiles[3 * tiles] = static_cast<int32_t>(e);
        t.tiles[3 * tiles + 1] = s;
        t.tiles[3 * tiles + 2] = s + BN < t.first[e + 1] ? s + BN : t.first[e + 1];
        ++tiles;
      }
    }
    *t.count = tiles;
  }
  __syncthreads();
  for (int64_t e = threadIdx.x; e < experts; e += blockDim.x) {
    int32_t next = t.first[e];
    for (int64_t p = 0; p < pairs; ++p)
      if (pair_id(r, p, used) == e) t.order[next++] = static_cast<int32_t>(p);
  }
  for (int64_t p = threadIdx.x; p < pairs; p += blockDim.x) {
    const int32_t e = pair_id(r, p, used);
    if (e >= 0 && e < experts) continue;
    for (int64_t row = 0; row < rows; ++row) *at<float>(r, 0, row, p % used, p / used, 0) = 0.0f;
  }
}

// Tile blockIdx.y of the sorted pairs against the 64 rows of blockIdx.x of its expert.
__global__ void __launch_bounds__(kThreads) matmul_id_mma_kernel(const NodeRecord* rp) {
  __shared__ __align__(32) Smem s;
  const NodeRecord& r = *rp;
  const int64_t used = r.ne[3][0], pairs = used * r.ne[3][1], experts = r.ne[1][2];
  const Route t = route_of(r, pairs, experts);
  if (static_cast<int32_t>(blockIdx.y) >= *t.count) return;  // the grid covers the most tiles there can be
  const int32_t* tile = t.tiles + 3 * blockIdx.y;
  const int ncols = tile[2] - tile[1];
  for (int n = threadIdx.x; n < ncols; n += kThreads) {
    const int64_t p = t.order[tile[1] + n], j = p % used, tok = p / used;
    s.x[n] = at<const float>(r, 2, 0, r.ne[2][1] == 1 ? 0 : j, tok, 0);
    s.y[n] = at<float>(r, 0, 0, j, tok, 0);
  }
  const auto* w = reinterpret_cast<const uint8_t*>(static_cast<uintptr_t>(r.addr[1] + tile[0] * r.nb[1][2]));
  gemm_tile(r.type[1], w, r.nb[1][1], static_cast<int64_t>(blockIdx.x) * BM, r.ne[1][1], r.ne[1][0], ncols, s);
}

unsigned tiles_of(int64_t n, int per) { return static_cast<unsigned>((n + per - 1) / per); }

}  // namespace

bool mma_weight_type(uint32_t type) { return type != ty::F32 && type != ty::BF16; }

size_t mma_id_scratch_bytes(const NodeRecord& host) {
  const int64_t pairs = host.ne[3][0] * host.ne[3][1];
  return static_cast<size_t>(route_ints(pairs, host.ne[1][2])) * sizeof(int32_t);
}

int launch_matmul_mma(const NodeRecord* rec, const NodeRecord& host, Stream stream) {
  const dim3 grid(tiles_of(host.ne[1][1], BM), tiles_of(rows(host, 2), BN));
  matmul_mma_kernel<<<grid, kThreads, 0, stream>>>(rec);
  return static_cast<int>(cudaGetLastError());
}

int launch_matmul_id_mma(const NodeRecord* rec, const NodeRecord& host, Stream stream) {
  route_kernel<<<1, kRouteThreads, 0, stream>>>(rec);
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return static_cast<int>(e);
  const int64_t pairs = host.ne[3][0] * host.ne[3][1];
  const dim3 grid(tiles_of(host.ne[1][1], BM), static_cast<unsigned>(max_tiles(pairs, host.ne[1][2])));
  matmul_id_mma_kernel<<<grid, kThreads, 0, stream>>>(rec);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace sy::cuda
