#include "companion.hpp"

#include <cstring>

#include "names_text.hpp"
#include "switchyard/quant.hpp"

namespace sy::hfq {

Result<FoundTensor> need(const TensorFinder& f, const std::string& module, const std::string& suffix,
                         const std::string& method) {
  FoundTensor t = f.find(module + "." + suffix);
  if (!t.tensor)
    return error::corrupt("the " + method + " checkpoint in " + f.dir().string() + " has no tensor " +
                          hf::quoted_text(module + "." + suffix) + ", which the quantized linear " +
                          hf::quoted_text(module) + " needs; the download is incomplete or the checkpoint was written "
                          "by another tool (download it again)");
  return t;
}

FoundTensor maybe(const TensorFinder& f, const std::string& module, const std::string& suffix) {
  return f.find(module + "." + suffix);
}

Status expect_dtype(const FoundTensor& t, std::initializer_list<Dtype> allowed) {
  std::string names;
  for (Dtype d : allowed) {
    if (d == t.tensor->dtype) return Status::ok();
    names += (names.empty() ? "" : " or ") + std::string(hf::dtype_name(d));
  }
  return error::corrupt(t.file + ": tensor " + hf::quoted_text(t.tensor->name) + " is " +
                        hf::dtype_name(t.tensor->dtype) + ", but this layout stores it as " + names +
                        "; the checkpoint was not written by the tool its config.json names");
}

std::string shape_text(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

Status expect_shape(const FoundTensor& t, const std::vector<int64_t>& shape, const std::string& why) {
  if (t.tensor->shape == shape) return Status::ok();
  return error::corrupt(t.file + ": tensor " + hf::quoted_text(t.tensor->name) + " has shape " +
                        shape_text(t.tensor->shape) + ", but " + why + " make it " + shape_text(shape) +
                        "; the tensor or config.json does not belong to this checkpoint");
}

float float_at(const FoundTensor& t, uint64_t i) noexcept {
  switch (t.tensor->dtype) {
    case Dtype::F32: {
      float f;
      std::memcpy(&f, t.data.data() + i * 4, 4);
      return f;
    }
    case Dtype::F16:
    case Dtype::BF16: {
      uint16_t h;
      std::memcpy(&h, t.data.data() + i * 2, 2);
      return t.tensor->dtype == Dtype::F16 ? fp16_to_fp32(h) : bf16_to_fp32(h);
    }
    default:
      return 0.0f;  // expect_dtype() refused it before
  }
}

uint64_t elements(const FoundTensor& t) noexcept {
  uint64_t n = 1;
  for (int64_t d : t.tensor->shape) n *= static_cast<uint64_t>(d);
  return n;
}

}  // namespace sy::hfq
