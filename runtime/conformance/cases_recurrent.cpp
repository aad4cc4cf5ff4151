// The linear-attention ops of qwen35moe: causal conv1d and the gated delta rule. Both update
// a state slot in place, so the state is compared too; several sequences in one call use
// different slots, and the inputs are strided views as the graph makes them (q, k, v are
// views of the convolution's output).
#include <cmath>
#include <string>

#include "conformance/case_builder.hpp"

namespace sy::conformance::detail {
namespace {

void conv1d(std::vector<Case>& out, int64_t ch, int64_t K, int64_t slots, const std::vector<int32_t>& slot, Layout l) {
  const auto tokens = static_cast<int64_t>(slot.size());
  std::string shape = "channels " + std::to_string(ch) + ", kernel " + std::to_string(K) + ", tokens " +
                      std::to_string(tokens) + ", " + std::to_string(slots) + " state slots";
  if (l != Layout::contiguous) shape += std::string("; x ") + layout_name(l);
  Builder b(OpKind::conv1d, StorageType::F32, "F32", shape);
  const int32_t x = b.f32({ch, tokens}, l);
  const int32_t w = b.f32({K, ch}, Layout::contiguous, 0.5, "w");
  const int32_t state = b.f32({(K - 1) * ch, slots}, Layout::contiguous, 1.0, "state");
  const int32_t s = b.ints(slot, {tokens}, "slots");
  b.mark_output(state);
  out.push_back(b.finish({x, w, state, s}, b.dst(StorageType::F32, {ch, tokens})));
}

void delta_net(std::vector<Case>& out, int64_t d, int64_t kh, int64_t vh, int64_t slots, const std::vector<int32_t>& slot,
               Layout l) {
  const auto t = static_cast<int64_t>(slot.size());
  std::string shape = "head " + std::to_string(d) + ", key heads " + std::to_string(kh) + ", value heads " +
                      std::to_string(vh) + ", tokens " + std::to_string(t) + ", " + std::to_string(slots) + " slots";
  if (l != Layout::contiguous) shape += std::string("; q, k, v ") + layout_name(l);
  Builder b(OpKind::delta_net, StorageType::F32, "F32", shape);
  const double unit = 1.0 / std::sqrt(static_cast<double>(d));  // rows of about unit length, as after l2_norm
  const int32_t q = b.f32({d, kh, t}, l, unit, "q");
  const int32_t k = b.f32({d, kh, t}, l, unit, "k");
  const int32_t v = b.f32({d, vh, t}, l, 1.0, "v");
  std::vector<float> g(static_cast<size_t>(vh * t)), beta(g.size());
  for (auto& x : g) x = static_cast<float>(-2.0 * b.rng().uniform());  // log of a decay in (e^-2, 1]
  for (auto& x : beta) x = static_cast<float>(b.rng().uniform());
  const int32_t gi = b.f32_values(g, {vh, t}, "g");
  const int32_t bi = b.f32_values(beta, {vh, t}, "beta");
  const int32_t state = b.f32({d * d * vh, slots}, Layout::contiguous, 0.5, "state");
  const int32_t s = b.ints(slot, {t}, "slots");
  b.mark_output(state);
  out.push_back(b.finish({q, k, v, gi, bi, state, s}, b.dst(StorageType::F32, {d, vh, t})));
}

}  // namespace

void add_recurrent_cases(std::vector<Case>& out) {
  conv1d(out, 37, 4, 3, {2}, Layout::contiguous);
  conv1d(out, 37, 4, 3, {0, 0, 0, 2, 2, 2}, Layout::strided);
  delta_net(out, 16, 2, 4, 2, {1}, Layout::contiguous);
  delta_net(out, 16, 2, 4, 2, {0, 0, 1, 1, 1}, Layout::strided);
  delta_net(out, 32, 1, 2, 1, {0, 0, 0}, Layout::permuted);
}

}  // namespace sy::conformance::detail
