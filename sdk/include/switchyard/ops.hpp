// The op vocabulary of the compute graph. Backends answer capability queries in these
// terms; the scheduler places each node on a backend that supports it.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace sy {

enum class OpKind : uint32_t {
  get_rows, rms_norm, matmul, matmul_id, add, mul, scale, swiglu, silu, gelu, sigmoid,
  softmax, rope, top_k, argsort, concat, copy, conv1d, delta_net, attention,
  l2_norm, softplus, set_rows, expert_weights, moe_combine, gather_cols,
  fp8_qdq,
};

/// Every op, in enum order.
std::span<const OpKind> all_ops() noexcept;
/// Lower-case op name ("matmul_id").
std::string_view op_name(OpKind op) noexcept;

}  // namespace sy
