// Static FP8 activation scales (`<linear>.input_scale` beside `<linear>.weight`, written by
// the fp8 reader for checkpoints with activation_scheme "static"), applied when the pipeline
// sets format.fp8_activations: static. Linears that read the same activation are quantized
// with one scale, the largest of theirs, as vLLM does for its fused q/k/v and gate/up
// projections and for the experts of an MoE layer (docs/formats.md).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "switchyard/format.hpp"
#include "switchyard/status.hpp"

namespace sy::model {

/// Whether the tensors can run with static activation scales: at least one `.input_scale`,
/// and one beside every FP8 linear. The errors name format.fp8_activations and the fix.
Status check_static_scales(std::span<const TensorDesc> tensors);

/// The weights whose linears read the same activation as `weight` (itself included), by
/// canonical name: blk.N.attn_{q,k,v}, blk.N.ffn_{gate,up}, their _exps and _shexp forms.
std::vector<std::string> same_input_weights(const std::string& weight);

}  // namespace sy::model
