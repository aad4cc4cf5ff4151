// Memory accounting: for a placement of a model's tensors on devices, the bytes each
// device needs for weights, KV cache, recurrent state, compute buffers and runtime
// overhead at a context length and number of parallel sequences; and the decode speed
// the memory bandwidths allow. docs/tuning.md gives every formula.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "planner/model_desc.hpp"
#include "switchyard/storage.hpp"

namespace sy::planner {

/// Runtime overhead per device: a GPU's driver context, command pools and library
/// workspaces; on the host the process, plugins, tokenizer tables and graph metadata.
inline constexpr uint64_t kGpuOverheadBytes = 512ull << 20;
inline constexpr uint64_t kCpuOverheadBytes = 256ull << 20;
/// KV positions are allocated in blocks of this many (runtime/kv).
inline constexpr int64_t kKvBlock = 32;

struct DeviceSpec {
  std::string name;        ///< "cpu", "gpu0", "cuda0", ...
  bool gpu = false;
  uint64_t budget = 0;     ///< memory the device has for us
  double bandwidth = 0;    ///< bytes/s of weight streaming
  std::string bandwidth_source;  ///< "given", "measured", "assumed"
};

struct Request {
  int64_t ctx = 4096;     ///< positions per sequence
  int64_t parallel = 1;   ///< sequences alive at once
  int64_t kv_tokens = 0;  ///< KV pool positions shared by all sequences; 0: ctx x parallel
  StorageType kv_type = StorageType::F16;
  int64_t ubatch = 512;
};

/// Where each tensor lives (an index into the device list), and each layer's cache.
struct Assignment {
  std::vector<int> tensor_device;  ///< per ModelDesc::tensors entry
  std::vector<int> layer_device;   ///< KV cache / recurrent state of layer il
  int output_device = 0;           ///< where the logits are computed
};

struct DeviceUsage {
  uint64_t weights = 0, expert_weights = 0;  ///< expert_weights is part of weights
  uint64_t kv = 0, recurrent = 0, compute = 0, overhead = 0;
  [[nodiscard]] uint64_t total() const { return weights + kv + recurrent + compute + overhead; }
};

/// KV cache positions a request allocates: ctx rounded up to whole blocks, per sequence.
uint64_t kv_cells(const Request& r);

/// KV bytes per token and sequence: 2 (K and V) x full-attention layers x KV heads x head
/// size x bytes per element of the KV type (q8_0: 34/32, q4_0: 18/32).
uint64_t kv_bytes_per_token(const model::HParams& hp, StorageType kv_type);
/// Recurrent state per sequence: per linear-attention layer the conv state
/// ((kernel-1) x channels) and the delta-net state (heads x state x state), all f32.
uint64_t recurrent_bytes_per_sequence(const model::HParams& hp);
/// Compute buffers of a device that runs layers (the live activations of one ubatch), plus
/// the logits on the output device.
uint64_t compute_bytes(const model::HParams& hp, const Request& r, bool runs_layers, bool output);

/// Per-device usage of `a` (devices[i] <-> result[i]).
std::vector<DeviceUsage> account(const ModelDesc& m, const Assignment& a, const std::vector<DeviceSpec>& devices,
                                 const Request& r);

/// Decode ceiling in tokens/s for one sequence at context position `pos`: each token reads
/// every dense weight, n_used/n_expert of the routed experts, the KV cache up to pos and the
/// recurrent state, at each device's bandwidth. With `parallel` sequences the step reads
/// the weights once and each sequence's cache; returns the aggregate tokens/s.
double decode_ceiling(const ModelDesc& m, const Assignment& a, const std::vector<DeviceSpec>& devices,
                      const Request& r, int64_t pos, int64_t parallel);

/// Host memory bandwidth measured by streaming reads over a buffer larger than the caches.
double measure_ram_bandwidth();

}  // namespace sy::planner
