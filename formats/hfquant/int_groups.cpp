#include "int_groups.hpp"

#include <cstring>

#include "names_text.hpp"
#include "parallel.hpp"
#include "switchyard/quant.hpp"

namespace sy::hfq {

int64_t core_group(int64_t group) noexcept {
  for (int64_t g : {128, 64, 32})
    if (group > 0 && group % g == 0) return g;
  return 0;
}

Result<hf::DecodedLinear> to_int_groups(const IntLinear& q, const std::string& module) {
  const int64_t g = core_group(q.group);
  if (g == 0 || q.cols % q.group != 0)
    return error::unsupported("the quantized linear " + hf::quoted_text(module) + " has groups of " +
                              std::to_string(q.group) + " input columns (of " + std::to_string(q.cols) +
                              "); Switchyard computes groups that are a multiple of 32 dividing the row, so this "
                              "checkpoint needs requantizing with group_size 32, 64, 128 or -1");
  const bool four = q.bits <= 4;
  const StorageType type = static_cast<StorageType>((four ? 1010 : 1020) + (g == 32 ? 0 : g == 64 ? 1 : 2));
  const uint64_t block = 4 + static_cast<uint64_t>(four ? g / 2 : g);
  const int64_t blocks = q.cols / g, groups = q.cols / q.group;
  hf::DecodedLinear d;
  d.type = type;
  d.rows = q.rows;
  d.cols = q.cols;
  d.bytes.resize(static_cast<size_t>(static_cast<uint64_t>(q.rows * blocks) * block));
  parallel_for(q.rows, [&](int64_t r0, int64_t r1) {
    for (int64_t n = r0; n < r1; ++n) {
      const uint8_t* codes = q.codes.data() + n * q.cols;
      for (int64_t b = 0; b < blocks; ++b) {
        auto* out = reinterpret_cast<uint8_t*>(d.bytes.data()) + static_cast<uint64_t>(n * blocks + b) * block;
        const int64_t k0 = b * g, grp = n * groups + k0 / q.group;
        const uint16_t s = q.scales[static_cast<size_t>(grp)];
        const uint16_t z = fp32_to_fp16(static_cast<float>(q.zeros[static_cast<size_t>(grp)]));
        std::memcpy(out, &s, 2);
        std::memcpy(out + 2, &z, 2);
        if (four)
          for (int64_t j = 0; j < g / 2; ++j)
            out[4 + j] = static_cast<uint8_t>(codes[k0 + j] | (codes[k0 + j + g / 2] << 4));
        else
          std::memcpy(out + 4, codes + k0, static_cast<size_t>(g));
      }
    }
  });
  return d;
}

}  // namespace sy::hfq
