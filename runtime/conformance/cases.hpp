// The op cases of the backend conformance suite: every op of the IR (graph.hpp's table) x
// every storage type it takes x shapes that are not multiples of 32/64 (one token and
// several) x non-contiguous sources where the op reads any layout. Each case is one node
// over tensors that each own a buffer; inputs are drawn from fixed seeds, so a case is the
// same bytes on every machine and every run.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "switchyard/graph.hpp"
#include "switchyard/ops.hpp"
#include "switchyard/storage.hpp"

namespace sy::conformance {

/// One tensor of a case, alone in its buffer: `t` gives type, shape, strides and the byte
/// offset inside the buffer (its buffer and data are filled in when a device runs it).
struct CaseTensor {
  GraphTensor t;
  std::vector<std::byte> bytes;  ///< the buffer's whole initial contents
  bool output = false;           ///< read back and compared: the destination, and caches and states written in place
  std::string role;              ///< what it is, for messages: "dst", "W", "k cache"
};

struct Case {
  OpKind op = OpKind::copy;
  StorageType type = StorageType::F32;  ///< the storage-type axis (weights, table, cache or converted type)
  std::string types;                    ///< the types in words: "Q4_K x F32"
  std::string shape;                    ///< shape and layout in words: "k 512, rows 37, m 7; x permuted"
  std::vector<CaseTensor> tensors;
  GraphNode node;

  /// "matmul Q4_K x F32 [k 512, rows 37, m 7]": how reports name the case.
  [[nodiscard]] std::string name() const;
};

/// Which cases to build; an empty list means all.
struct CaseFilter {
  std::vector<OpKind> ops;
  std::vector<StorageType> types;  ///< matches the case's type axis
};

/// The cases, in op order (fixed seeds: the same list every time).
std::vector<Case> make_cases(const CaseFilter& filter = {});

/// The storage types the suite tries for an op (weights for matmul, the table for get_rows,
/// the cache for set_rows and attention, the converted type for copy; F32 otherwise).
std::vector<StorageType> case_types(OpKind op);

}  // namespace sy::conformance
