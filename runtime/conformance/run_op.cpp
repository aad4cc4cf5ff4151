#include "conformance/run_op.hpp"

#include <cstring>
#include <memory>
#include <string>

#include "switchyard/quant.hpp"

namespace sy::conformance {
namespace {

// The scheduler's key: op and every tensor's type, shape and strides.
uint64_t shape_key(const Case& c) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](uint64_t v) { h = (h ^ v) * 1099511628211ull; };
  mix(static_cast<uint64_t>(c.op));
  for (const auto& ct : c.tensors) {
    mix(static_cast<uint64_t>(ct.t.type));
    for (int d = 0; d < 4; ++d) mix(static_cast<uint64_t>(ct.t.ne[d])), mix(static_cast<uint64_t>(ct.t.nb[d]));
  }
  return h;
}

Status step(const Status& st, const std::string& what) {
  return st ? st : Status(st.code(), what + ": " + st.message());
}

}  // namespace

Support ask(const Device& dev, const Case& c) {
  std::vector<GraphTensor> t;
  for (const auto& ct : c.tensors) t.push_back(ct.t);
  return dev.supports(c.node, t);
}

Result<std::vector<double>> values_of(const GraphTensor& t, std::span<const std::byte> bytes) {
  const auto& info = storage_type_info(t.type);
  std::vector<double> out;
  out.reserve(static_cast<size_t>(t.elements()));
  std::vector<float> row(static_cast<size_t>(t.ne[0]));
  // Block types have packed rows; 16-bit floats with packed rows convert the same way.
  const bool packed_rows = info.block_size > 1 || ((t.type == StorageType::F16 || t.type == StorageType::BF16) &&
                                                   t.nb[0] == static_cast<int64_t>(info.block_bytes));
  for (int64_t i3 = 0; i3 < t.ne[3]; ++i3)
    for (int64_t i2 = 0; i2 < t.ne[2]; ++i2)
      for (int64_t i1 = 0; i1 < t.ne[1]; ++i1) {
        const size_t base = t.offset + static_cast<size_t>(i1 * t.nb[1] + i2 * t.nb[2] + i3 * t.nb[3]);
        if (packed_rows) {
          const auto rb = storage_row_bytes(t.type, static_cast<uint64_t>(t.ne[0]));
          if (!rb || base + *rb > bytes.size()) return error::internal("conformance: a row lies outside its buffer");
          if (auto st = dequantize_row(t.type, bytes.data() + base, row.data(), t.ne[0]); !st) return st;
          for (float v : row) out.push_back(v);
          continue;
        }
        for (int64_t i0 = 0; i0 < t.ne[0]; ++i0) {
          const size_t at = base + static_cast<size_t>(i0 * t.nb[0]);
          if (at + info.block_bytes > bytes.size()) return error::internal("conformance: an element lies outside its buffer");
          if (t.type == StorageType::F32) {
            float v;
            std::memcpy(&v, bytes.data() + at, 4);
            out.push_back(v);
          } else if (t.type == StorageType::I32) {
            int32_t v;
            std::memcpy(&v, bytes.data() + at, 4);
            out.push_back(v);
          } else {
            uint16_t h;
            std::memcpy(&h, bytes.data() + at, 2);
            out.push_back(t.type == StorageType::F16 ? fp16_to_fp32(h) : bf16_to_fp32(h));
          }
        }
      }
  return out;
}

Result<Outputs> run_case(Device& dev, const Case& c) {
  std::vector<std::unique_ptr<Buffer>> buffers;
  std::vector<GraphTensor> tensors;
  for (const auto& ct : c.tensors) {
    auto b = dev.allocate(ct.bytes.size(), BufferKind::device_local);
    if (!b) return step(b.status(), "allocating " + std::to_string(ct.bytes.size()) + " bytes for " + ct.role);
    GraphTensor t = ct.t;
    t.buffer = b->get();
    void* host = (*b)->host_data();  // null unless the host may read the memory in place
    t.data = host ? static_cast<std::byte*>(host) + t.offset : nullptr;
    tensors.push_back(t);
    buffers.push_back(std::move(*b));
  }
  // copy_to_device must read its source before it returns: each upload comes from a
  // scratch copy that is scribbled over right after the call.
  std::vector<std::byte> scratch;
  for (size_t i = 0; i < c.tensors.size(); ++i) {
    scratch = c.tensors[i].bytes;
    if (auto st = dev.copy_to_device(*buffers[i], 0, scratch); !st) return step(st, "uploading " + c.tensors[i].role);
    std::memset(scratch.data(), 0xa5, scratch.size());
  }
  if (auto st = dev.synchronize(); !st) return step(st, "synchronize after the uploads");

  const SubGraph g{tensors, {&c.node, 1}, shape_key(c)};
  if (auto st = dev.execute(g); !st) return step(st, "execute");

  Outputs out;
  std::vector<std::vector<std::byte>> back;
  for (size_t i = 0; i < c.tensors.size(); ++i) {
    if (!c.tensors[i].output) continue;
    out.tensor.push_back(static_cast<int32_t>(i));
    back.emplace_back(c.tensors[i].bytes.size());
  }
  for (size_t k = 0; k < back.size(); ++k) {
    const auto i = static_cast<size_t>(out.tensor[k]);
    if (auto st = dev.copy_to_host(*buffers[i], 0, back[k]); !st) return step(st, "downloading " + c.tensors[i].role);
  }
  // An event recorded after the downloads covers the execution too.
  if (auto st = dev.wait_event(dev.record_event()); !st) return step(st, "waiting for the downloads");
  for (size_t k = 0; k < back.size(); ++k) {
    auto v = values_of(c.tensors[static_cast<size_t>(out.tensor[k])].t, back[k]);
    if (!v) return v.status();
    out.values.push_back(std::move(*v));
  }
  if (auto st = dev.synchronize(); !st) return step(st, "synchronize before freeing the buffers");
  return out;
}

}  // namespace sy::conformance
