#include "model/weights.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "graph/graph.hpp"
#include "log/log.hpp"
#include "switchyard/quant.hpp"

namespace sy::model {

namespace {

// mlock's unit is the page: the range is widened to the pages that hold [p, p + n).
bool lock_pages(const std::byte* p, size_t n) {
  if (n == 0) return true;
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(p) & ~(page - 1);
  const auto end = (reinterpret_cast<uintptr_t>(p) + n + page - 1) & ~(page - 1);
  return mlock(reinterpret_cast<const void*>(begin), end - begin) == 0;
}

}  // namespace

Result<Weights> Weights::load(const ModelSource& src, Device& device, int device_index, const WeightOptions& opts) {
  Weights w;
  bool lock_failed = false;
  int lock_errno = 0;
  auto lock = [&](const std::byte* p, size_t n) {
    if (!opts.mlock || lock_failed || p == nullptr) return;
    if (lock_pages(p, n)) {
      w.locked_bytes_ += n;
    } else {
      lock_failed = true;
      lock_errno = errno;
    }
  };
  w.device_ = device_index;
  const bool host_visible = device.info().host_visible;
  auto lg = log::get("model");
  const auto descs = src.tensors();
  for (size_t i = 0; i < descs.size(); ++i) {
    const TensorDesc& d = descs[i];
    GraphTensor t;
    t.type = d.type;
    for (size_t k = 0; k < d.shape.size() && k < 4; ++k) t.ne[k] = static_cast<int64_t>(d.shape[k]);
    graph::set_contiguous_strides(t);
    const bool matrix = d.shape.size() >= 2;
    const bool convert = matrix && t.type != StorageType::F32 && !device.supports(OpKind::matmul, t.type);
    w.bytes_ += d.bytes;
    if (!convert && host_visible && opts.mmap) {
      auto view = src.view(i);
      if (view) {
        t.data = const_cast<std::byte*>(view->data());  // weights are only read
        w.mapped_bytes_ += view->size();
        lock(view->data(), view->size());
        w.tensors_.emplace(d.name, t);
        continue;
      }
    }
    // Read the bytes; convert to F32 when no kernel handles the type.
    std::vector<std::byte> raw(d.bytes);
    if (auto st = src.read(i, 0, raw); !st) return st;
    if (convert) {
      if (!can_dequantize(t.type))
        return error::unsupported("tensor " + d.name + " is stored as " + std::string(storage_type_name(t.type)) +
                                  ", which neither a kernel nor a converter of this build handles");
      lg->warn("fallback: no {} kernel for {} on {}; {} converted to F32 at load", "matmul",
               storage_type_name(t.type), device.info().name, d.name);
      std::vector<std::byte> f32(static_cast<size_t>(t.elements()) * sizeof(float));
      for (int64_t r = 0; r < t.rows(); ++r)
        if (auto st = dequantize_row(t.type, raw.data() + r * t.nb[1], reinterpret_cast<float*>(f32.data()) + r * t.ne[0], t.ne[0]); !st)
          return st;
      raw = std::move(f32);
      t.type = StorageType::F32;
      graph::set_contiguous_strides(t);
      ++w.converted_;
    }
    auto buf = device.allocate(raw.size());
    if (!buf) return buf.status();
    if (auto st = (*buf)->upload(0, raw); !st) return st;
    t.buffer = buf->get();
    t.data = (*buf)->host_data();
    lock(static_cast<const std::byte*>(t.data), raw.size());
    w.buffers_.push_back(std::move(*buf));
    w.tensors_.emplace(d.name, t);
  }
  // llama.cpp's behaviour: a failed lock is a warning, since the model still runs.
  if (lock_failed)
    lg->warn("model.mlock: could not lock the weights in RAM ({}; {} locked); raise the memlock limit (ulimit -l, "
             "or LimitMEMLOCK= for a service) or set model.mlock false",
             std::strerror(lock_errno), w.locked_bytes_);
  return w;
}

Weights Weights::shapes_only(std::span<const TensorDesc> descs) {
  Weights w;
  for (const auto& d : descs) {
    GraphTensor t;
    t.type = d.type;
    for (size_t k = 0; k < d.shape.size() && k < 4; ++k) t.ne[k] = static_cast<int64_t>(d.shape[k]);
    graph::set_contiguous_strides(t);
    w.tensors_.emplace(d.name, t);
  }
  return w;
}

const GraphTensor* Weights::find(std::string_view name) const {
  auto it = tensors_.find(std::string(name));
  return it == tensors_.end() ? nullptr : &it->second;
}

}  // namespace sy::model
