#include "pipeline/emit.hpp"

#include <charconv>
#include <cmath>
#include <filesystem>

#include <yaml-cpp/yaml.h>

#include "switchyard/utf8.hpp"

namespace sy::pipeline {
namespace {

// The shortest text that reads back as the same double; YAML spells infinities .inf.
std::string number(double v) {
  if (std::isinf(v)) return v > 0 ? ".inf" : "-.inf";
  if (std::isnan(v)) return ".nan";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, r.ptr);
  // "1" would read back as an integer, which a number parameter accepts too; keep it plain.
  return s;
}

// Paths are bytes on Linux; a YAML document is UTF-8, so other bytes are shown escaped.
std::string text(const std::string& s) { return escape_invalid_utf8(s); }

// Absolute, so the document loads the same files from wherever it is saved.
std::string path_text(const std::filesystem::path& p) {
  std::error_code ec;
  const auto abs = std::filesystem::absolute(p, ec);
  return text((ec ? p : abs.lexically_normal()).string());
}

void value(YAML::Emitter& e, const ParamValue& v) {
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool>) {
          e << (x ? "true" : "false");
        } else if constexpr (std::is_same_v<T, int64_t>) {
          e << std::to_string(x);
        } else if constexpr (std::is_same_v<T, double>) {
          e << number(x);
        } else if constexpr (std::is_same_v<T, std::string>) {
          e << YAML::DoubleQuoted << text(x);
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          e << YAML::Flow << YAML::BeginSeq;
          for (auto i : x) e << std::to_string(i);
          e << YAML::EndSeq;
        } else {
          e << YAML::Flow << YAML::BeginSeq;
          for (const auto& s : x) e << YAML::DoubleQuoted << text(s);
          e << YAML::EndSeq;
        }
      },
      v);
}

void params(YAML::Emitter& e, const ParamMap& m) {
  for (const auto& [k, v] : m.values()) {
    e << YAML::Key << k << YAML::Value;
    value(e, v);
  }
}

std::string layers(const LayerCount& c) {
  if (c.mode == LayerCount::Mode::all) return "all";
  if (c.mode == LayerCount::Mode::automatic) return "auto";
  return std::to_string(c.n);
}

std::string amount(const MemoryAmount& a) {
  if (a.bytes == 0 && a.fraction > 0) return number(a.fraction * 100) + "%";
  return std::to_string(a.bytes);
}

}  // namespace

std::string to_yaml(const Pipeline& p) {
  YAML::Emitter e;
  e << YAML::BeginMap;
  if (!p.plugin_path.empty()) {
    e << YAML::Key << "plugin_path" << YAML::Value << YAML::BeginSeq;
    for (const auto& d : p.plugin_path) e << YAML::DoubleQuoted << path_text(d);
    e << YAML::EndSeq;
  }
  e << YAML::Key << "strict" << YAML::Value << (p.strict ? "true" : "false");

  e << YAML::Key << "model" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "path" << YAML::Value << YAML::DoubleQuoted << path_text(p.model.path);
  if (!p.model.format.empty()) e << YAML::Key << "format" << YAML::Value << p.model.format;
  if (!p.model.tokenizer.empty())
    e << YAML::Key << "tokenizer" << YAML::Value << YAML::DoubleQuoted << path_text(p.model.tokenizer);
  if (!p.model.chat_template.empty())
    e << YAML::Key << "chat_template" << YAML::Value << YAML::DoubleQuoted << path_text(p.model.chat_template);
  e << YAML::Key << "mmap" << YAML::Value << (p.model.mmap ? "true" : "false");
  e << YAML::Key << "mlock" << YAML::Value << (p.model.mlock ? "true" : "false");
  e << YAML::EndMap;

  if (!p.format.convert_to.empty() || p.format.fp8_activations != "weight_only") {
    e << YAML::Key << "format" << YAML::Value << YAML::BeginMap;
    if (!p.format.convert_to.empty()) e << YAML::Key << "convert_to" << YAML::Value << p.format.convert_to;
    if (p.format.fp8_activations != "weight_only")
      e << YAML::Key << "fp8_activations" << YAML::Value << p.format.fp8_activations;
    e << YAML::EndMap;
  }

  e << YAML::Key << "backends" << YAML::Value << YAML::BeginSeq;
  for (const auto& b : p.backends) {
    e << YAML::Flow << YAML::BeginMap << YAML::Key << "plugin" << YAML::Value << b.plugin;
    if (!b.devices.empty()) {
      e << YAML::Key << "devices" << YAML::Value << YAML::Flow << YAML::BeginSeq;
      for (auto d : b.devices) e << std::to_string(d);
      e << YAML::EndSeq;
    }
    params(e, b.params);
    e << YAML::EndMap;
  }
  e << YAML::EndSeq;

  e << YAML::Key << "placement" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "gpu_layers" << YAML::Value << layers(p.placement.gpu_layers);
  e << YAML::Key << "cpu_moe" << YAML::Value << layers(p.placement.cpu_moe);
  e << YAML::Key << "overrides" << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (const auto& r : p.placement.overrides) e << YAML::DoubleQuoted << text(r.pattern + "=" + r.device);
  e << YAML::EndSeq;
  e << YAML::Key << "headroom" << YAML::Value << amount(p.placement.headroom);
  e << YAML::Key << "min_headroom" << YAML::Value << amount(p.placement.min_headroom);
  e << YAML::EndMap;

  const auto& c = p.context;
  e << YAML::Key << "context" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "length" << YAML::Value << std::to_string(c.length);
  e << YAML::Key << "kv_type" << YAML::Value << c.kv_type;
  e << YAML::Key << "flash_attention" << YAML::Value << c.flash_attention;
  e << YAML::Key << "batch" << YAML::Value << std::to_string(c.batch);
  e << YAML::Key << "ubatch" << YAML::Value << std::to_string(c.ubatch);
  e << YAML::Key << "parallel" << YAML::Value << std::to_string(c.parallel);
  e << YAML::Key << "kv_tokens" << YAML::Value << std::to_string(c.kv_tokens);
  e << YAML::EndMap;

  e << YAML::Key << "sampling" << YAML::Value << YAML::BeginSeq;
  for (const auto& s : p.sampling) {
    e << YAML::Flow << YAML::BeginMap << YAML::Key << s.name << YAML::Value << YAML::Flow << YAML::BeginMap;
    params(e, s.params);
    e << YAML::EndMap << YAML::EndMap;
  }
  e << YAML::EndSeq;

  const auto& sv = p.server;
  e << YAML::Key << "server" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "host" << YAML::Value << YAML::DoubleQuoted << text(sv.host);
  e << YAML::Key << "port" << YAML::Value << std::to_string(sv.port);
  e << YAML::Key << "slots" << YAML::Value << std::to_string(sv.slots);
  e << YAML::Key << "batch_queue" << YAML::Value << (sv.batch_queue ? "true" : "false");
  e << YAML::Key << "max_queue" << YAML::Value << std::to_string(sv.max_queue);
  e << YAML::Key << "max_step_ms" << YAML::Value << std::to_string(sv.max_step_ms);
  e << YAML::Key << "request_timeout" << YAML::Value << std::to_string(sv.request_timeout);
  // A secret is not printed: the line says it is set, and the file needs it added back.
  if (!sv.api_key.empty() || !sv.api_keys.empty()) e << YAML::Comment("api_key(s) set and not shown");
  e << YAML::Key << "max_tokens" << YAML::Value << std::to_string(sv.max_tokens);
  e << YAML::Key << "max_body" << YAML::Value << std::to_string(sv.max_body);
  if (!sv.cors_origins.empty()) {
    e << YAML::Key << "cors_origins" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const auto& o : sv.cors_origins) e << YAML::DoubleQuoted << text(o);
    e << YAML::EndSeq;
  }
  if (!sv.model_alias.empty()) e << YAML::Key << "model_alias" << YAML::Value << YAML::DoubleQuoted << text(sv.model_alias);
  e << YAML::EndMap;
  e << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

}  // namespace sy::pipeline
