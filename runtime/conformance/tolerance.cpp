// The bounds, each with its reason. "Relative" always means relative to the largest value of
// the reference tensor. The derivations assume what the cases draw: N(0, 1) activations and
// weights of any scale (the ratio does not depend on it).
#include "conformance/tolerance.hpp"

#include <algorithm>
#include <cmath>

namespace sy::conformance {
namespace {

bool k_block(StorageType t) { return storage_type_info(t).block_size == 256; }

Tolerance matmul(StorageType w) {
  switch (w) {
    case StorageType::F32:
      return {1e-5, "f32 sums of up to 512 products in another order: ~sqrt(k) last-bit errors, ~1e-6"};
    case StorageType::F16:
      return {2e-3,
              "the CPU keeps f32 activations; a device may round them to f16 (2^-11 each): over k products that is "
              "2.8e-4 of the output's spread, ~1e-3 of its largest value at 4 sigma"};
    case StorageType::BF16:
      return {1e-2,
              "the CPU rounds activations to bf16 (2^-9 each, 1.1e-3 of the output's spread); a device that keeps "
              "f32 differs by that: up to ~4.5e-3 of the largest output at 4 sigma over few outputs (2.2e-3 between "
              "exact math and the CPU on these cases)"};
    default: break;
  }
  if (k_block(w))
    return {4e-2,
            "the CPU quantizes activations to q8_K (256-blocks, step amax/127, rms error 6.6e-3 of sigma for "
            "N(0,1)); a device with its own or no activation quantization differs by up to sqrt(2) x that: "
            "~1.9e-2 of the largest output at 4 sigma over 37 outputs (1.2e-2 between exact math and the CPU "
            "on these cases); 2x margin"};
  return {3e-2,
          "the CPU quantizes activations to q8_0 (32-blocks, step amax/127, rms error 4.7e-3 of sigma for N(0,1)); "
          "a device with its own or no activation quantization differs by up to sqrt(2) x that: ~1.4e-2 of the "
          "largest output at 4 sigma over 37 outputs (8.8e-3 between exact math and the CPU on these cases); "
          "2x margin"};
}

// Writing f32 values into a storage type (set_rows, copy).
Tolerance store(StorageType t) {
  switch (t) {
    case StorageType::F32: return {1e-6, "a plain copy"};
    case StorageType::F16: return {1e-3, "rounding to f16 may differ by one f16 step (2^-10 of the value)"};
    case StorageType::BF16: return {8e-3, "rounding to bf16 may differ by one bf16 step (2^-7 of the value)"};
    case StorageType::Q8_0:
      return {2e-2,
              "the CPU's quantizer searches the block scale that minimises the squared error; another recipe "
              "lands within one step (amax/127) of the value, and so may differ by two steps: 1.6e-2"};
    case StorageType::Q4_0:
      return {0.25,
              "the CPU's quantizer searches the block scale; another recipe (d = max/-8) lands within one step "
              "(amax/8) of the value and so may differ by two: 0.25 (a row written to the wrong slot differs by ~1)"};
    default: return {2e-2, "quantized storage"};
  }
}

Tolerance attention(StorageType kv) {
  switch (kv) {
    case StorageType::F32:
      return {2e-5,
              "an online softmax in another tile order; GLSL's exp may be 3 + 2|x| ulp off (|x| < 10 here): ~3e-6"};
    case StorageType::F16:
      return {2e-3,
              "the CPU keeps the query in f32; a device may round it to f16 for the K dot products (scores move "
              "by 2.8e-4), and p to f16 for the V sum: ~5e-4 of the largest output"};
    case StorageType::BF16:
      return {1e-2,
              "the CPU rounds the query to bf16 (scores move by 1.1e-3 sigma); a device that keeps f32 differs "
              "by that, weighted by |v - out|: 1.8e-3 of the largest output between exact math and the CPU on "
              "these cases, sqrt(2) x that for a device rounding on its own; 4x margin"};
    default:
      return {2e-2,
              "the CPU quantizes the query to q8_0 for the scores (they move by 4.7e-3 sigma); a device that "
              "keeps f32 differs by that, weighted by |v - out|: 7.2e-3 of the largest output between exact "
              "math and the CPU on these cases, sqrt(2) x that for a device quantizing on its own; 2x margin"};
  }
}

}  // namespace

Diff measure(const std::vector<double>& got, const std::vector<double>& want) {
  Diff d;
  if (got.size() != want.size()) {
    d.rel = INFINITY;
    return d;
  }
  double worst = -1;
  for (size_t i = 0; i < want.size(); ++i) {
    // Infinite reference values (a masked score) set no scale: the relative error of the
    // finite ones would vanish against them.
    if (std::isfinite(want[i])) d.ref_max = std::max(d.ref_max, std::abs(want[i]));
    // A NaN (an output never written: destinations start as NaN) is an infinite difference,
    // on either side: the reference writes every output. Infinities must match exactly.
    const double e = std::isnan(got[i]) || std::isnan(want[i]) ? INFINITY
                     : std::isinf(got[i]) || std::isinf(want[i]) ? (got[i] == want[i] ? 0.0 : INFINITY)
                                                                 : std::abs(got[i] - want[i]);
    if (e > worst) worst = e, d.index = i, d.got = got[i], d.want = want[i];
  }
  if (want.empty()) return d;
  // An all-zero reference: the absolute difference is the measure.
  d.rel = worst == 0 ? 0 : worst / (d.ref_max > 0 ? d.ref_max : 1.0);
  return d;
}

Tolerance tolerance(const Case& c) {
  switch (c.op) {
    case OpKind::top_k:
    case OpKind::argsort: return {0, "indices: exact (the inputs have no ties)"};
    case OpKind::gather_cols: return {0, "values moved, not computed: exact"};
    case OpKind::fp8_qdq:
      return {0, "a division, a rounding to an FP8 code defined bit for bit and one multiply, each exact or one IEEE "
                 "rounding: exact"};
    case OpKind::add:
    case OpKind::mul:
    case OpKind::scale:
    case OpKind::concat:
      return {1e-6, "one IEEE rounding per element, as on the CPU (room for flushed denormals only)"};
    case OpKind::moe_combine:
    case OpKind::expert_weights:
      return {1e-6, "a sum of 2-3 products or a renormalisation: last-bit differences (FMA contraction, division)"};
    case OpKind::rms_norm:
    case OpKind::l2_norm:
      return {1e-5, "a sum of squares in another order (the CPU sums in double) and a reciprocal square root: ~1e-6"};
    case OpKind::softmax:
    case OpKind::silu:
    case OpKind::gelu:
    case OpKind::sigmoid:
    case OpKind::softplus:
    case OpKind::swiglu:
      return {2e-5, "GLSL allows exp 3 + 2|x| ulp, log 3 ulp and tanh from exp; |x| < 30 here: ~6e-6"};
    case OpKind::rope:
      return {2e-3,
              "GLSL's sin and cos guarantee only 2^-11 absolute error (in [-pi, pi]; angles here reach 600 rad, "
              "so an f32 angle is off by ~1e-4 rad too): up to 2 x 4.9e-4 of the largest value"};
    case OpKind::conv1d: return {1e-5, "four products per output in another order"};
    case OpKind::delta_net:
      return {2e-5, "dot products of up to 32 terms through a few recurrent steps, exp of the decay: ~3e-6"};
    case OpKind::matmul:
    case OpKind::matmul_id: return matmul(c.type);
    case OpKind::get_rows:
    case OpKind::copy: {
      const StorageType dst = c.tensors[static_cast<size_t>(c.node.dst)].t.type;
      if (c.op == OpKind::copy && dst != StorageType::F32) return store(dst);
      if (c.type == StorageType::F32 || c.type == StorageType::F16 || c.type == StorageType::BF16)
        return {1e-6, "widening to f32 is exact"};
      return {1e-5,
              "dequantizing: scale x code (- a block minimum for K-quants, whose products can exceed the result a "
              "few times): last-bit differences of those products, ~5e-7"};
    }
    case OpKind::set_rows: return store(c.type);
    case OpKind::attention: return attention(c.type);
  }
  return {0, "no tolerance defined"};
}

}  // namespace sy::conformance
