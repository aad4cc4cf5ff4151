// Expert-indexed matmul for MoE layers: every (slot, token) pair picks one expert's
// matrix. Pairs are grouped per expert so each expert's weights stream from memory once
// per call, however many tokens chose it (the prefill case), then results are scattered.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "matmul.hpp"

namespace sy::cpu {

struct MatmulIdArgs {
  const void* w = nullptr;      ///< n_experts matrices of rows x k, consecutive, in w_type
  StorageType w_type = StorageType::F32;
  int64_t k = 0, rows = 0, n_experts = 0;
  const float* x = nullptr;     ///< [k, x_slots, n_tokens]; x_slots is 1 (broadcast) or n_used
  int64_t x_slots = 1;
  std::span<const int32_t> ids; ///< [n_used, n_tokens]: expert of slot j for token t at j + t*n_used
  int64_t n_used = 1, n_tokens = 1;
  float* y = nullptr;           ///< [rows, n_used, n_tokens]
};

/// Working memory of matmul_id, kept by the caller so repeated calls reuse it.
struct MatmulIdScratch {
  std::vector<std::vector<int64_t>> pairs;  ///< per expert: (slot + token * n_used) entries
  std::vector<float> x, y;                  ///< one expert's gathered inputs and outputs
  std::vector<uint8_t> act;                 ///< converted activations
};

/// Runs it; an id outside [0, n_experts) is an error naming the token and slot.
Status matmul_id(const MatmulIdArgs& a, Isa isa, ThreadPool& pool, MatmulIdScratch& scratch);
/// The same with scratch memory of its own.
Status matmul_id(const MatmulIdArgs& a, Isa isa, ThreadPool& pool);

/// Reference: one scalar matmul per (slot, token) pair.
Status matmul_id_reference(const MatmulIdArgs& a);

}  // namespace sy::cpu
