// Building one conformance case: tensors with their layouts and seeded contents, then the
// node. Shared by the cases_*.cpp files, one per op family.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "conformance/cases.hpp"
#include "synth/random_fill.hpp"

namespace sy::conformance::detail {

/// A shape, innermost first (1 to 4 sizes).
using Dims = std::vector<int64_t>;

/// How a source is laid out in its buffer. The view always starts a few elements into the
/// buffer, except for `contiguous`, so a kernel must honour GraphTensor::offset too.
enum class Layout {
  contiguous,
  strided,     ///< rows padded: nb[1] > ne[0] elements, as a view of every other column block
  permuted,    ///< dimensions 1 and 2 swapped in memory
  transposed,  ///< dimensions 0 and 1 swapped in memory: nb[0] is not the element size
};

/// "strided", "permuted", ... ("" for contiguous).
const char* layout_name(Layout l);

class Builder {
 public:
  /// `shape` describes the case in words; the seed comes from op, types and shape, so every
  /// case draws its own numbers and adding a case changes no other.
  Builder(OpKind op, StorageType type, std::string types, std::string shape);

  /// An F32 tensor of N(mean, sigma^2) values in `layout` (the padding holds values too,
  /// which a kernel must not read).
  int32_t f32(const Dims& ne, Layout layout = Layout::contiguous, double sigma = 1.0,
              const std::string& role = "x", double mean = 0.0);
  /// F32 values given in logical order, contiguous.
  int32_t f32_values(const std::vector<float>& v, const Dims& ne, const std::string& role);
  /// Contiguous rows of `type` quantized from N(0, sigma^2) values.
  int32_t typed(StorageType type, const Dims& ne, double sigma, const std::string& role);
  /// I32 values in logical order, contiguous.
  int32_t ints(const std::vector<int32_t>& v, const Dims& ne, const std::string& role);
  /// A contiguous destination filled with 0xff bytes (NaN for float types, -1 for I32), so
  /// an element the kernel never writes shows up as a difference.
  int32_t dst(StorageType type, const Dims& ne);
  /// Compares this tensor too after the run (a cache or state written in place).
  void mark_output(int32_t t);

  /// The generator of this case, for values that need their own recipe (ids, decays).
  synth::NormalRng& rng() { return rng_; }

  /// The case: node `op` writing `dst` from `src`, with integer and float parameters.
  Case finish(std::initializer_list<int32_t> src, int32_t dst, std::initializer_list<int32_t> i = {},
              std::initializer_list<float> f = {});

 private:
  int32_t add(CaseTensor t);

  Case c_;
  synth::NormalRng rng_;
};

/// `k` distinct ids in [0, n) for each of `tokens` tokens, token-major ([k, tokens]).
std::vector<int32_t> distinct_ids(synth::NormalRng& rng, int64_t k, int64_t n, int64_t tokens);

/// "F32", "Q4_K", ...
std::string type_name(StorageType t);

// One function per op family (cases_<family>.cpp); each appends its cases.
void add_matmul_cases(std::vector<Case>& out);       // matmul, matmul_id, get_rows
void add_elementwise_cases(std::vector<Case>& out);  // unary, binary, norms, softmax, swiglu, scale, fp8_qdq
void add_data_cases(std::vector<Case>& out);         // copy, concat, top_k, argsort, expert_weights, moe_combine, gather_cols
void add_rope_cases(std::vector<Case>& out);         // rope
void add_cache_cases(std::vector<Case>& out);        // set_rows, attention
void add_recurrent_cases(std::vector<Case>& out);    // conv1d, delta_net

}  // namespace sy::conformance::detail
