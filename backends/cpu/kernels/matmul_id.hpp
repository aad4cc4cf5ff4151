// Expert-indexed matmul for MoE layers: every (slot, token) pair picks one expert's
// matrix. Pairs are grouped per expert so each expert's weights stream from memory once
// per call, however many tokens chose it (the prefill case); each input row is converted
// to the dot type once, whatever number of experts reads it; and all chosen experts run in
// one parallel region, results written straight to their pairs' rows.
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

/// Working memory of matmul_id, kept by the caller so repeated calls reuse it (steady-state
/// decode does not allocate).
struct MatmulIdScratch {
  std::vector<int64_t> start;      ///< per expert: its first entry in `order`, then a fill cursor
  std::vector<int64_t> order;      ///< pairs (slot + token * n_used), grouped by expert, token order kept
  std::vector<int64_t> pos;        ///< per pair: its index in `order`
  std::vector<GemmBlock> blocks;   ///< one per chosen expert
  std::vector<uint8_t> act;        ///< converted activations, one row per entry of `order`
};

/// Runs it; an id outside [0, n_experts) is an error naming the token and slot.
Status matmul_id(const MatmulIdArgs& a, Isa isa, ThreadPool& pool, MatmulIdScratch& scratch);
/// The same with scratch memory of its own.
Status matmul_id(const MatmulIdArgs& a, Isa isa, ThreadPool& pool);

/// The gate and up projections of a MoE FFN: both read the same input and ids (only w and
/// y differ, same shapes), so the activations are converted once and both run in one
/// region; with glu.fn, glu.h ([rows, n_used, n_tokens]) also receives glu.fn(gate, up).
/// The weight types must convert activations alike (can_share_activations).
Status matmul_id_gate_up(const MatmulIdArgs& gate, const MatmulIdArgs& up, const Glu& glu, Isa isa, ThreadPool& pool,
                         MatmulIdScratch& scratch);

/// Reference: one scalar matmul per (slot, token) pair.
Status matmul_id_reference(const MatmulIdArgs& a);

}  // namespace sy::cpu
