// libFuzzer target for topology files: any bytes must end with a Topology that passes
// check_topology() or an error naming the file, never an exception, a crash or undefined
// behaviour. A topology that loads is also scaled, as `synth --layers/--experts` does.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "synth/topology.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto t = sy::synth::parse_topology(text, "fuzz.json");
  if (!t) return 0;
  if (!sy::synth::check_topology(*t)) std::abort();  // a loaded topology is always in bounds
  // Scale by numbers taken from the input, within the flags' ranges; grown as with --grow,
  // so that the bounds of a grown topology are exercised too.
  const int64_t layers = size > 0 ? data[0] % 9 : 0;
  const int64_t experts = size > 1 ? data[1] % 17 : 0;
  (void)sy::synth::scale_topology(*t, layers * t->full_attn_interval, t->n_expert ? experts : 0, 0, true);
  return 0;
}
