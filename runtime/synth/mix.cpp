#include "synth/mix.hpp"

#include <algorithm>
#include <cctype>

#include "switchyard/quant.hpp"

namespace sy::synth {
namespace {

using T = StorageType;

// The types synth writes: those the CPU backend has matmul kernels for.
constexpr T kWritable[] = {T::F32, T::F16,  T::BF16, T::Q4_0, T::Q4_1, T::Q5_0, T::Q5_1,  T::Q8_0,
                           T::Q2_K, T::Q3_K, T::Q4_K, T::Q5_K, T::Q6_K, T::IQ4_NL, T::IQ4_XS};

// llama.cpp's use_more_bits: the first and last eighth of the layers, and every third one
// in between, get more bits.
bool more_bits(int64_t i, int64_t n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

// A row whose length is not a multiple of the type's block falls back as llama.cpp does.
T fit_row(T t, int64_t row) {
  auto fits = [row](T x) { return row % storage_type_info(x).block_size == 0; };
  if (fits(t)) return t;
  switch (t) {
    case T::Q2_K: case T::Q3_K: case T::IQ4_XS: t = T::IQ4_NL; break;
    case T::Q4_K: t = T::Q5_0; break;
    case T::Q5_K: t = T::Q5_1; break;
    case T::Q6_K: t = T::Q8_0; break;
    default: break;
  }
  return fits(t) ? t : T::F16;
}

}  // namespace

Result<TypeMix> parse_type_mix(std::string_view name) {
  std::string n(name);
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (n == "q4_k_m" || n == "q5_k_m") return TypeMix{n, n == "q4_k_m" ? T::Q4_K : T::Q5_K, true};
  if (auto t = storage_type_from_name(n); t && std::find(std::begin(kWritable), std::end(kWritable), *t) != std::end(kWritable))
    return TypeMix{n, *t, false};
  std::string list = "q4_k_m, q5_k_m";
  for (T t : kWritable) {
    std::string s(storage_type_name(t));
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    list += ", " + s;
  }
  return error::invalid_argument("--type '" + std::string(name) + "' is not a type synth writes; choose one of " + list);
}

std::vector<TensorDesc> assign_types(const TypeMix& mix, const std::vector<TensorSpec>& tensors) {
  int64_t n_attn_v = 0, n_layer = 0;
  for (const auto& s : tensors) {
    n_attn_v += s.kind == "attn_v";
    n_layer = std::max(n_layer, s.layer + 1);
  }
  std::vector<TensorDesc> out;
  out.reserve(tensors.size());
  int64_t i_attn_v = 0;
  for (const auto& s : tensors) {
    T t = T::F32;
    if (s.matrix) {
      t = mix.base;
      if (mix.k_mix) {
        if (s.kind == "output") t = T::Q6_K;
        else if (s.kind == "attn_v") t = more_bits(i_attn_v, n_attn_v) ? T::Q6_K : mix.base;
        else if (s.kind.rfind("ffn_down", 0) == 0) t = more_bits(s.layer, n_layer) ? T::Q6_K : mix.base;
        else if (s.kind == "attn_qkv") t = mix.base == T::Q4_K ? T::Q5_K : T::Q6_K;
      }
      t = fit_row(t, s.shape[0]);
    }
    i_attn_v += s.kind == "attn_v";
    TensorDesc d;
    d.name = s.name;
    d.shape = s.shape;
    d.type = t;
    d.bytes = tensor_bytes(t, s.shape).value_or(0);
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace sy::synth
