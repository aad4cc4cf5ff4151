// A model's tensors, made ready for the graph: mapped in place where the device can read
// the file's memory (the CPU: zero copy from mmap), uploaded otherwise, and converted at
// load when no kernel handles their storage type (logged and counted as a fallback).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "switchyard/backend.hpp"
#include "switchyard/format.hpp"
#include "switchyard/graph.hpp"

namespace sy::model {

/// How weights reach memory (the pipeline's model.mmap and model.mlock).
struct WeightOptions {
  bool mmap = true;    ///< use the file's mapping where the device can read it; false: read into RAM
  bool mlock = false;  ///< lock the weights' pages in RAM (needs the memlock limit)
};

class Weights {
 public:
  /// Makes every tensor of `src` available on `device` (index `device_index` in the
  /// scheduler). `src` must outlive the result.
  static Result<Weights> load(const ModelSource& src, Device& device, int device_index,
                              const WeightOptions& opts = {});

  /// The tensors' types and shapes without their data (null addresses): enough to check
  /// a layout with make_architecture, as `plan` does from a file's header.
  static Weights shapes_only(std::span<const TensorDesc> descs);

  /// The tensor, or nullptr.
  [[nodiscard]] const GraphTensor* find(std::string_view name) const;
  [[nodiscard]] int device() const { return device_; }
  /// Tensors converted at load because no kernel reads their type.
  [[nodiscard]] int64_t converted() const { return converted_; }
  [[nodiscard]] uint64_t bytes() const { return bytes_; }
  /// Bytes used in place from the file's mapping (0 with mmap off).
  [[nodiscard]] uint64_t mapped_bytes() const { return mapped_bytes_; }
  /// Bytes locked in RAM by mlock.
  [[nodiscard]] uint64_t locked_bytes() const { return locked_bytes_; }

 private:
  std::unordered_map<std::string, GraphTensor> tensors_;
  std::vector<std::unique_ptr<Buffer>> buffers_;
  int device_ = 0;
  int64_t converted_ = 0;
  uint64_t bytes_ = 0;
  uint64_t mapped_bytes_ = 0;
  uint64_t locked_bytes_ = 0;
};

}  // namespace sy::model
