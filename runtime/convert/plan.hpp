// The conversion plan: for each weight tensor and the device it is placed on, how the
// device will compute it. In order of preference: the device's native kernel for the type;
// the type's plugin-declared repack into a type the device computes natively; requantization
// into the type the pipeline names (format.convert_to), when the device computes that one;
// on the CPU, the generic kernel that dequantizes a few blocks at a time (no copy); else
// impossible, with a sentence saying what to change. Made at load (model/weights.cpp
// applies it) and by `plan` and `validate`, which print it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "switchyard/backend.hpp"
#include "switchyard/tensor.hpp"

namespace sy::convert {

/// What a device computes, as its backend states it (convert/native.hpp reads the manifest).
struct DeviceTypes {
  std::string name;                 ///< in messages: "cpu", "vulkan0", or a backend's name in `validate`
  bool declared = false;            ///< the backend's manifest lists its native types
  std::vector<StorageType> native;  ///< those types (when declared)
  bool generic = false;             ///< runs any registered type through a generic kernel (the CPU)
  /// A started device: its supports() must also accept each native or generic use. Without
  /// one (plan and validate before any backend starts) the manifest alone decides.
  const Device* device = nullptr;
};

enum class Action { native, repack, requantize, generic, impossible };

/// "native", "repack", "requantize", "generic", "impossible".
std::string_view action_name(Action a) noexcept;

/// The decision for one tensor on one device.
struct Decision {
  Action action = Action::native;
  StorageType from{}, to{};  ///< `to` is the type computed on the device (== from unless converted)
  uint64_t bytes_before = 0, bytes_after = 0;
  std::string op;   ///< impossible: the op the device refuses ("matmul")
  std::string fix;  ///< impossible: what to change, as a sentence fragment
  /// impossible: "<device> has no <op> kernel for <type> weights (<tensor>)".
  [[nodiscard]] std::string problem(const std::string& device, const std::string& tensor) const;
};

/// The storage types `format.convert_to` may name, as spelled in a pipeline.
const std::vector<std::string>& convert_to_choices();
/// The type of a `format.convert_to` value; nullopt for anything else.
std::optional<StorageType> convert_to_type(std::string_view name);

/// The op a device refuses for a weight tensor stored as `as` (the matmul it feeds, a
/// matmul_id for a stack of experts, get_rows for the embeddings), or nullopt.
std::optional<OpKind> refused_op(const Device& dev, const TensorDesc& t, StorageType as);

/// Decides for tensor `t` on `dev`. `convert_to` is the pipeline's format.convert_to.
Decision decide(const TensorDesc& t, const DeviceTypes& dev, std::optional<StorageType> convert_to);

/// The bytes of rows x n elements converted as `d` says (repack or requantize) into `out`,
/// which holds d.bytes_after bytes.
Status convert_rows(const Decision& d, std::span<const std::byte> src, int64_t n, int64_t rows, std::span<std::byte> out);

/// One line of a plan: what happens to the tensors of one type on one device.
struct Step {
  std::string device;
  StorageType from{}, to{};
  Action action = Action::native;
  int64_t tensors = 0;
  uint64_t bytes_before = 0, bytes_after = 0;
  std::string first;    ///< the first tensor, for messages
  std::string problem;  ///< impossible: Decision::problem() of the first tensor, then its fix
};

/// The decisions of a model, gathered per (device, type, action).
class Plan {
 public:
  void add(const std::string& device, const TensorDesc& t, const Decision& d);
  [[nodiscard]] const std::vector<Step>& steps() const { return steps_; }
  /// Steps that change a tensor's bytes (repack, requantize).
  [[nodiscard]] int64_t converted_tensors() const;

 private:
  std::vector<Step> steps_;
};

/// One line for people: "test-toy.TOY8 on vulkan0: repacked into Q8_0 (plugin test-toy),
/// 24 tensors, 1.50 MiB -> 1.50 MiB".
std::string describe(const Step& s);

/// [{device, type, action, to, tensors, bytes_before, bytes_after, first, problem?}...]
nlohmann::json plan_json(const Plan& p);

}  // namespace sy::convert
