// The recurrent ops of linear-attention layers (qwen35moe): causal conv1d and the gated
// delta-net, each carrying per-sequence state in F32 slots that they update in place
// (shaders/conv1d.comp, delta_net.comp). Inputs are read through their strides, so the
// q/k/v views the model cuts out of one convolution output need no copy.
#include <algorithm>
#include <cstdint>
#include <limits>

#include "kernel.hpp"

namespace sy::vulkan {
namespace {

constexpr int64_t kMaxGroups = 65535;
constexpr int64_t kMaxTaps = 8;      // conv1d.comp's MAXK
constexpr int64_t kMaxKeyDim = 128;  // the largest delta_net variant's MAXDK

bool fits_int32(int64_t v) { return v >= 0 && v <= std::numeric_limits<int32_t>::max(); }

bool aligned4(const GraphTensor& t) {
  for (int d = 0; d < 4; ++d)
    if (t.ne[d] > 1 && t.nb[d] % 4 != 0) return false;
  return t.buffer == nullptr || t.offset % 4 == 0;
}

// An f32 (or i32) tensor of shape [a, b, c, 1] indexed element by element through its strides.
bool plain(const GraphTensor& t, StorageType type, int64_t a, int64_t b, int64_t c = 1) {
  return t.type == type && t.ne[0] == a && t.ne[1] == b && t.ne[2] == c && t.ne[3] == 1 && strides_fit(t) &&
         aligned4(t) && a > 0 && b > 0 && c > 0 && fits_int32(t.elements());
}

// State slots: rows of `width` packed floats, at any aligned row stride.
bool state_ok(const GraphTensor& s, int64_t width) {
  return s.ne[1] > 0 && plain(s, StorageType::F32, width, s.ne[1]) && (width <= 1 || s.nb[0] == 4);
}

// ---- conv1d: x [ch, T], w [K, ch], state [(K-1) ch, slots], slot [T] ----

Support conv1d_supports(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  for (int s = 0; s < 4; ++s)
    if (n.src[s] < 0) return Support::no;
  if (n.src[4] >= 0) return Support::no;
  const auto &x = src_of(n, t, 0), &w = src_of(n, t, 1), &state = src_of(n, t, 2), &slot = src_of(n, t, 3);
  const int64_t ch = x.ne[0], tokens = x.ne[1], taps = w.ne[0];
  if (!plain(x, StorageType::F32, ch, tokens) || !plain(dst_of(n, t), StorageType::F32, ch, tokens)) return Support::no;
  if (taps < 1 || taps > kMaxTaps || !plain(w, StorageType::F32, taps, ch)) return Support::no;
  if (!state_ok(state, (taps - 1) * ch) || !plain(slot, StorageType::I32, tokens, 1)) return Support::no;
  return Support::yes;
}

Launch conv1d_plan(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  Launch l;
  l.shader = "conv1d";
  l.groups[0] = static_cast<uint32_t>((src_of(n, t, 0).ne[0] + 63) / 64);
  return l;
}

// ---- delta_net: q, k [dk, kh, T], v [dv, vh, T], g, beta [vh, T], state [dk dv vh, slots], slot [T] ----

Support delta_net_supports(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  for (int s = 0; s < 7; ++s)
    if (n.src[s] < 0) return Support::no;
  if (n.src[7] >= 0) return Support::no;
  const auto &q = src_of(n, t, 0), &k = src_of(n, t, 1), &v = src_of(n, t, 2);
  const int64_t dk = q.ne[0], kh = q.ne[1], tokens = q.ne[2], dv = v.ne[0], vh = v.ne[1];
  if (dk > kMaxKeyDim || vh > kMaxGroups || !plain(q, StorageType::F32, dk, kh, tokens) ||
      !plain(k, StorageType::F32, dk, kh, tokens) || !plain(v, StorageType::F32, dv, vh, tokens) || vh % kh != 0)
    return Support::no;
  if (!plain(src_of(n, t, 3), StorageType::F32, vh, tokens) || !plain(src_of(n, t, 4), StorageType::F32, vh, tokens))
    return Support::no;
  if (!fits_int32(dk * dv * vh) || !state_ok(src_of(n, t, 5), dk * dv * vh)) return Support::no;
  if (!plain(src_of(n, t, 6), StorageType::I32, tokens, 1) || !plain(dst_of(n, t), StorageType::F32, dv, vh, tokens))
    return Support::no;
  return Support::yes;
}

Launch delta_net_plan(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  const auto &q = src_of(n, t, 0), &v = src_of(n, t, 2);
  Launch l;
  l.shader = q.ne[0] <= 64 ? "delta_net_64" : "delta_net_128";
  l.groups[0] = static_cast<uint32_t>((v.ne[0] + 63) / 64);
  l.groups[1] = static_cast<uint32_t>(v.ne[1]);
  return l;
}

constexpr KernelDef kDefs[] = {
    {OpKind::conv1d, conv1d_supports, conv1d_plan, {}},
    {OpKind::delta_net, delta_net_supports, delta_net_plan, {}},
};

}  // namespace

std::span<const KernelDef> recurrent_kernels() { return kDefs; }

}  // namespace sy::vulkan
