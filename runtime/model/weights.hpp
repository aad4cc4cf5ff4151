// A model's tensors, made ready for the graph on the devices placement chose: mapped in
// place where the device reads the file's memory (the CPU: zero copy from mmap), uploaded
// into pooled per-device buffers otherwise. How each device computes each tensor is the
// conversion plan's decision (convert/plan.hpp): native, the type's repack, requantization
// to format.convert_to, or the CPU's generic kernel; each distinct conversion is logged once
// with its bytes. A tensor its GPU cannot compute any of those ways stays in RAM for the
// CPU (refused under strict).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "convert/plan.hpp"
#include "switchyard/backend.hpp"
#include "switchyard/format.hpp"
#include "switchyard/graph.hpp"

namespace sy::model {

/// How weights reach memory (the pipeline's model.mmap and model.mlock, and strict).
struct WeightOptions {
  bool mmap = true;    ///< use the file's mapping where the device can read it; false: read into RAM
  bool mlock = false;  ///< lock the weights' pages in RAM (needs the memlock limit)
  bool strict = false; ///< refuse a tensor its device cannot compute instead of moving it to RAM
  std::optional<StorageType> convert_to;  ///< format.convert_to: the type to requantize into where needed
  /// format.fp8_activations: static: linears with an input_scale quantize their input with it
  /// (static_scales.hpp); load refuses a model without such scales.
  bool static_activations = false;
};

/// Where each tensor goes: devices in scheduler order, a device index per source tensor,
/// and the device that reads host memory (weights mapped from the file live there).
struct WeightPlacement {
  std::span<Device* const> devices;
  std::vector<int> tensor_device;  ///< per ModelSource::tensors() entry; empty: every tensor on host
  int host = 0;
  /// Per device, what its backend computes natively (convert/native.hpp); empty: each
  /// device's supports() alone decides, and the host has the generic kernel.
  std::vector<convert::DeviceTypes> types;
};

/// Bytes of weights a device holds.
struct PlacedBytes {
  uint64_t weights = 0;         ///< every tensor, experts included
  uint64_t expert_weights = 0;  ///< routed experts (part of weights)
};

/// Whether the host device computes this weight from a repacked copy (interleaved_of() its
/// type: Q4_K_X16, Q6_K_X16, Q4_0_X16, Q8_0_X16, I4_G*_X16): a Q4_K, Q6_K, Q4_0, Q8_0 or I4_G* matrix of whole 16-row groups, other than the embedding table (get_rows reads it row by
/// row), on a device that supports the interleaved type. `plan` asks the same question.
/// The loader repacks it when the host's weights also fit in 90% of available memory.
bool repacks_on_host(const Device& host, const TensorDesc& d);

class Weights {
 public:
  /// Makes every tensor of `src` available on its device. `src` and the devices must
  /// outlive the result.
  static Result<Weights> load(const ModelSource& src, const WeightPlacement& where, const WeightOptions& opts = {});

  /// The tensors' types and shapes without their data (null addresses): enough to check
  /// a layout with make_architecture, as `plan` does from a file's header.
  static Weights shapes_only(std::span<const TensorDesc> descs);

  /// The tensor, or nullptr.
  [[nodiscard]] const GraphTensor* find(std::string_view name) const;
  /// The name of one of this model's tensors (not of a view made from it); empty otherwise.
  [[nodiscard]] std::string_view name_of(const GraphTensor* t) const;
  /// The input order of a linear whose columns were stored reordered (`<name>.input_order`
  /// beside `<name>.weight`, GPTQ act-order), or nullptr.
  [[nodiscard]] const GraphTensor* input_order(const GraphTensor* weight) const;
  /// With static activations (WeightOptions): the `.input_scale` tensors of the linears that
  /// read the same input as `weight` (same_input_weights), whose largest element quantizes
  /// that input; empty for weight-only runs and for linears without a scale.
  [[nodiscard]] std::vector<const GraphTensor*> input_scales(const GraphTensor* weight) const;
  /// The device index holding a tensor of this model (or a view of one).
  [[nodiscard]] int device_of(const GraphTensor& t) const;
  /// The copy of a shared tensor on `device` (every layer's device gets one of the few
  /// tensors all layers read, such as rope_freqs.weight), else `t` itself.
  [[nodiscard]] const GraphTensor* on_device(const GraphTensor* t, int device) const;
  /// Tensors stored at load in another type than the file's (the plan's repacks and
  /// requantizations).
  [[nodiscard]] int64_t converted() const { return converted_; }
  /// The conversion plan applied at load: per device and type, what happened.
  [[nodiscard]] const convert::Plan& conversions() const { return plan_; }
  /// Tensors kept in RAM because their GPU has no kernel for them.
  [[nodiscard]] int64_t kept_on_host() const { return kept_on_host_; }
  [[nodiscard]] uint64_t bytes() const { return bytes_; }
  /// Bytes used in place from the file's mapping (0 with mmap off).
  [[nodiscard]] uint64_t mapped_bytes() const { return mapped_bytes_; }
  /// Bytes locked in RAM by mlock.
  [[nodiscard]] uint64_t locked_bytes() const { return locked_bytes_; }
  /// Bytes of the mapping whose page tables were filled at load (model/prefault.hpp).
  [[nodiscard]] uint64_t prefaulted_bytes() const { return prefaulted_bytes_; }
  /// Bytes rearranged at load into an interleaved layout for the host's kernels (the _X16 types).
  [[nodiscard]] uint64_t repacked_bytes() const { return repacked_bytes_; }
  /// Per device index: the bytes placed there.
  [[nodiscard]] const std::vector<PlacedBytes>& placed() const { return placed_; }

 private:
  void index_orders();

  std::unordered_map<std::string, GraphTensor> tensors_;
  /// weight -> its input order (act-order GPTQ); nodes of tensors_, which never rehash after load.
  std::unordered_map<const GraphTensor*, const GraphTensor*> orders_;
  /// tensor -> its name (keys of tensors_), for importance matrices.
  std::unordered_map<const GraphTensor*, std::string> names_;
  /// weight -> the input scales of the linears sharing its input (static FP8 activations).
  std::unordered_map<const GraphTensor*, std::vector<const GraphTensor*>> scales_;
  std::vector<std::unique_ptr<Buffer>> buffers_;
  std::vector<int> buffer_device_;  // per buffers_ entry
  std::vector<PlacedBytes> placed_;
  struct Replica {
    const GraphTensor* original;
    int device;
    GraphTensor copy;
  };
  std::vector<Replica> replicas_;
  convert::Plan plan_;
  int host_ = 0;
  bool static_activations_ = false;
  int64_t converted_ = 0;
  int64_t kept_on_host_ = 0;
  uint64_t bytes_ = 0;
  uint64_t mapped_bytes_ = 0;
  uint64_t locked_bytes_ = 0;
  uint64_t prefaulted_bytes_ = 0;
  uint64_t repacked_bytes_ = 0;
};

}  // namespace sy::model
