#include "extras.hpp"

#include <nlohmann/json.hpp>

#include "checkpoint.hpp"
#include "names_text.hpp"

namespace sy::hf {
namespace fs = std::filesystem;
namespace {

constexpr uint64_t kMaxConfigBytes = 16ull << 20;

Result<nlohmann::json> read_optional_json(const fs::path& p, bool& present) {
  std::error_code ec;
  present = fs::exists(p, ec);
  if (!present) return nlohmann::json();
  auto text = read_text_file(p, kMaxConfigBytes);
  if (!text) return text.status();
  try {
    return nlohmann::json::parse(*text);
  } catch (const std::exception& e) {
    return error::corrupt(p.string() + " is not valid JSON (" + quoted_text(e.what(), 200) +
                          "); fix or remove it");
  }
}

}  // namespace

Status add_folder_metadata(const fs::path& dir, Metadata& md) {
  bool present = false;
  const fs::path tc = dir / "tokenizer_config.json";
  auto t = read_optional_json(tc, present);
  if (!t) return t.status();
  if (present && t->is_object() && t->contains("chat_template")) {
    const auto& ct = (*t)["chat_template"];
    if (ct.is_string()) {
      md.set("tokenizer.chat_template", ct.get<std::string>());
    } else if (ct.is_array()) {
      // Named templates ([{name, template}, ...]): the one called "default", as transformers picks.
      for (const auto& e : ct)
        if (e.is_object() && e.contains("name") && e["name"] == "default" && e.contains("template") && e["template"].is_string())
          md.set("tokenizer.chat_template", e["template"].get<std::string>());
    }
  }
  const fs::path gc = dir / "generation_config.json";
  auto g = read_optional_json(gc, present);
  if (!g) return g.status();
  if (present && g->is_object()) {
    // llama.cpp's GGUF names for a model's recommended sampling.
    const std::pair<const char*, const char*> floats[] = {
        {"temperature", "general.sampling.temp"}, {"top_p", "general.sampling.top_p"},
        {"min_p", "general.sampling.min_p"}, {"repetition_penalty", "general.sampling.penalty_repeat"}};
    for (const auto& [from, to] : floats)
      if (auto it = g->find(from); it != g->end() && it->is_number()) md.set(to, it->get<float>());
    if (auto it = g->find("top_k"); it != g->end() && it->is_number_unsigned())
      md.set("general.sampling.top_k", static_cast<int32_t>(std::min<uint64_t>(it->get<uint64_t>(), INT32_MAX)));
    if (auto it = g->find("do_sample"); it != g->end() && it->is_boolean())
      md.set("general.sampling.do_sample", it->get<bool>());
  }
  return Status::ok();
}

}  // namespace sy::hf
