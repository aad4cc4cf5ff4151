#include "quantize/recipe.hpp"

#include <algorithm>
#include <cctype>
#include <iterator>

namespace sy::quant_tool {
namespace {

using T = StorageType;

struct Entry {
  const char* name;
  T base;
  Mix mix;
  uint32_t file_type;
};

// llama.cpp's ftype numbers (llama.h), so the files say what they are to every reader.
constexpr Entry kRecipes[] = {
    {"F32", T::F32, Mix::none, 0},          {"F16", T::F16, Mix::none, 1},
    {"BF16", T::BF16, Mix::none, 32},       {"Q4_0", T::Q4_0, Mix::none, 2},
    {"Q4_1", T::Q4_1, Mix::none, 3},        {"Q5_0", T::Q5_0, Mix::none, 8},
    {"Q5_1", T::Q5_1, Mix::none, 9},        {"Q8_0", T::Q8_0, Mix::none, 7},
    {"Q2_K", T::Q2_K, Mix::q2_k, 10},       {"Q3_K_S", T::Q3_K, Mix::q3_k_s, 11},
    {"Q3_K_M", T::Q3_K, Mix::q3_k_m, 12},   {"Q3_K_L", T::Q3_K, Mix::q3_k_l, 13},
    {"Q4_K_S", T::Q4_K, Mix::q4_k_s, 14},   {"Q4_K_M", T::Q4_K, Mix::q4_k_m, 15},
    {"Q5_K_S", T::Q5_K, Mix::q5_k_s, 16},   {"Q5_K_M", T::Q5_K, Mix::q5_k_m, 17},
    {"Q6_K", T::Q6_K, Mix::none, 18},       {"IQ4_NL", T::IQ4_NL, Mix::none, 25},
    {"IQ4_XS", T::IQ4_XS, Mix::none, 30},
};

std::string upper(std::string_view s) {
  std::string u(s);
  std::transform(u.begin(), u.end(), u.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return u;
}

}  // namespace

bool Recipe::quantized() const { return base != T::F32 && base != T::F16 && base != T::BF16; }

std::string recipe_names() {
  std::string s;
  for (const auto& e : kRecipes) s += (s.empty() ? "" : ", ") + std::string(e.name);
  return s;
}

Result<Recipe> parse_recipe(std::string_view name) {
  std::string n = upper(name);
  if (n == "Q3_K" || n == "Q4_K" || n == "Q5_K") n += "_M";
  const auto* it = std::find_if(std::begin(kRecipes), std::end(kRecipes), [&](const Entry& e) { return n == e.name; });
  if (it == std::end(kRecipes))
    return error::invalid_argument("'" + std::string(name) + "' is not a type quantize writes; choose one of " +
                                   recipe_names());
  return Recipe{it->name, it->base, it->mix, it->file_type};
}

}  // namespace sy::quant_tool
