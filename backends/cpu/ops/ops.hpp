// CPU ops on f32 views (the reference implementations; SIMD paths are added per op where
// the profile says they matter and are tested against these). Every op accepts
// non-contiguous views; outputs may not alias inputs unless stated.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "switchyard/status.hpp"
#include "switchyard/storage.hpp"
#include "thread_pool.hpp"
#include "view.hpp"

namespace sy::cpu {

/// Working memory for ops that need a row's worth of it. Callers that run ops repeatedly
/// pass one so steady state does not allocate; without one, an op uses its own.
struct OpScratch {
  std::vector<float> f;
  std::vector<int32_t> i;
  float* floats(size_t n) {
    if (f.size() < n) f.resize(n);
    return f.data();
  }
  int32_t* ints(size_t n) {
    if (i.size() < n) i.resize(n);
    return i.data();
  }
};

/// With a pool, ops that take one spread their rows over it when the work is large enough;
/// every row is computed as on one thread, so results do not depend on the thread count.

/// y = x / sqrt(mean(x^2) + eps), per row. y may be x.
Status rms_norm(const View& x, const View& y, float eps, ThreadPool* pool = nullptr);

/// y = x / max(||x||, eps), per row. y may be x.
Status l2_norm(const View& x, const View& y, float eps, ThreadPool* pool = nullptr);

/// y = softmax(x * scale + mask), per row; mask (optional, may broadcast over rows by
/// having fewer rows: row r uses mask row r % mask.rows()) adds -inf for masked positions.
Status softmax(const View& x, const View* mask, float scale, const View& y, OpScratch* scratch = nullptr,
               ThreadPool* pool = nullptr);

enum class Activation { silu, gelu, sigmoid, softplus };
/// y = f(x) elementwise. y may be x.
Status activate(Activation f, const View& x, const View& y, ThreadPool* pool = nullptr);
/// y = silu(gate) * up (SwiGLU). y may be gate or up.
Status swiglu(const View& gate, const View& up, const View& y, ThreadPool* pool = nullptr);

enum class Binary { add, mul };
/// y = a op b, with b broadcast along any dimension where its size is 1. y may be a.
Status binary(Binary op, const View& a, const View& b, const View& y, ThreadPool* pool = nullptr);
/// y = x * s. y may be x.
Status scale(const View& x, float s, const View& y, ThreadPool* pool = nullptr);

enum class RopeMode {
  normal,  ///< rotate adjacent pairs (x[2i], x[2i+1]) (llama)
  neox,    ///< rotate (x[i], x[i + n_dims/2]) (qwen, neox)
  multi,   ///< neox pairing; frequency index i uses position component sec(i) (Qwen3.5/3.6 M-RoPE)
};
struct RopeParams {
  RopeMode mode = RopeMode::normal;
  int64_t n_dims = 0;        ///< leading dimensions rotated; the rest pass through
  float freq_base = 10000.f;
  float freq_scale = 1.f;    ///< linear position scaling
  int sections[4] = {0, 0, 0, 0};  ///< multi: frequency indices per position component
  /// Per-pair frequency factors (llama.cpp's freq_factors, a file's rope_freqs.weight):
  /// empty, or n_dims/2 values; pair i turns by theta_i / freq_factors[i].
  std::span<const float> freq_factors;
};
/// Rotates x [head_dim, n_heads, n_tokens] in place. positions: one per token, or for
/// `multi` 4 per token laid out [4][n_tokens] (component-major, as llama.cpp stores them).
/// Pair i of a token at position p turns by p * freq_scale * freq_base^(-2i/n_dims), divided
/// by freq_factors[i] when given.
Status rope(const View& x, std::span<const int32_t> positions, const RopeParams& p, OpScratch* scratch = nullptr,
            ThreadPool* pool = nullptr);

/// dst row i = row ids[i] of src (rows of `cols` elements in storage type `type`), as f32.
Status get_rows(const void* src, StorageType type, int64_t cols, int64_t src_rows, std::span<const int32_t> ids,
                const View& dst, OpScratch* scratch = nullptr);

/// Indices of each row's elements ordered by value, descending (ties: lower index first).
/// out has ne[0] int32 per row, rows in x's row order.
Status argsort_desc(const View& x, std::span<int32_t> out);
/// The k largest of each row, descending (ties: lower index first): k int32 per row.
Status top_k(const View& x, int64_t k, std::span<int32_t> out, OpScratch* scratch = nullptr);

/// y = [a | b] along dimension `dim` (0..3); every other dimension must agree.
Status concat(const View& a, const View& b, int dim, const View& y);

/// Converts a contiguous row-major f32 view into `type` rows (quantize / f16 / bf16 / copy).
Status convert_from_f32(const View& x, StorageType type, void* out, OpScratch* scratch = nullptr);
/// Converts rows of `type` into an f32 view (any layout).
Status convert_to_f32(const void* in, StorageType type, const View& y, OpScratch* scratch = nullptr);

}  // namespace sy::cpu
