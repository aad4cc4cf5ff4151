// switchyard inspect MODEL [--json] [--tensors]: what a model file holds, through whichever
// weight-format plugin reads it best.
#include <cstdio>
#include <iostream>
#include <map>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/json_text.hpp"
#include "model/source.hpp"
#include "registry/registry.hpp"
#include "util/bytes.hpp"
#include "switchyard/quant.hpp"
#include "switchyard/utf8.hpp"

namespace sy::cli {
namespace {

using nlohmann::ordered_json;

// Every string a model file or the user gave is printed through this: metadata values keep
// their bytes, and the ones that are not UTF-8 appear as \xNN (docs/formats.md).
std::string text(std::string_view s) { return escape_invalid_utf8(s); }

// The escaped text of `s` when it fits in `n` bytes; otherwise its first whole characters
// and escapes in n - 3 bytes, then "...".
std::string clipped(std::string_view s, size_t n) {
  const std::string all = text(s);
  if (all.size() <= n) return all;
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const size_t len = utf8_sequence_length(s, i);
    const std::string piece = len ? std::string(s.substr(i, len)) : text(s.substr(i, 1));
    if (out.size() + piece.size() > n - 3) break;
    out += piece;
    i += len ? len : 1;
  }
  return out + "...";
}

ordered_json to_json(const MetaValue& v) {
  return std::visit(
      [](const auto& x) -> ordered_json {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, MetaArray>) {
          ordered_json a = ordered_json::array();
          for (const auto& i : x.items) a.push_back(to_json(i));
          return a;
        } else if constexpr (std::is_same_v<X, uint8_t> || std::is_same_v<X, int8_t>) {
          return static_cast<int>(x);
        } else if constexpr (std::is_same_v<X, std::string>) {
          return text(x);
        } else {
          return x;
        }
      },
      v);
}

std::string short_text(const MetaValue& v) {
  if (const auto* a = std::get_if<MetaArray>(&v)) {
    std::string s = "[";
    for (size_t i = 0; i < a->items.size() && i < 8; ++i) s += (i ? ", " : "") + short_text(a->items[i]);
    if (a->items.size() > 8) s += ", ... (" + std::to_string(a->items.size()) + " items)";
    return s + "]";
  }
  if (const auto* s = std::get_if<std::string>(&v)) return "\"" + clipped(*s, 60) + "\"";
  if (const auto* f = std::get_if<float>(&v)) {  // an f32 printed as a double shows noise digits
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.7g", static_cast<double>(*f));
    return buf;
  }
  return json_text(to_json(v));
}

using util::human_bytes;

std::string human_count(uint64_t n) {
  char buf[32];
  if (n >= 1000000000ull) std::snprintf(buf, sizeof buf, "%.2fB", static_cast<double>(n) / 1e9);
  else if (n >= 1000000ull) std::snprintf(buf, sizeof buf, "%.2fM", static_cast<double>(n) / 1e6);
  else if (n >= 1000ull) std::snprintf(buf, sizeof buf, "%.1fK", static_cast<double>(n) / 1e3);
  else std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(n));
  return buf;
}

std::string shape_text(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

struct Args {
  std::string model;
  bool json = false;
  bool tensors = false;
  std::string dump;
  std::string out;
};

// Writes one tensor dequantized to raw little-endian f32 in the file's element order
// (GGUF dimension order, innermost first), row by row so memory stays small.
int dump_tensor(const ModelSource& src, const std::string& name, const std::string& out_path) {
  const auto tensors = src.tensors();
  size_t idx = tensors.size();
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].name == name) idx = i;
  if (idx == tensors.size()) {
    std::cerr << "switchyard: the model has no tensor named '" << text(name) << "' (see inspect --tensors)\n";
    return 1;
  }
  const auto& t = tensors[idx];
  if (!can_dequantize(t.type)) {
    std::cerr << "switchyard: tensor '" << name << "' has storage type " << storage_type_name(t.type)
              << ", which has no reference dequantizer yet\n";
    return 1;
  }
  auto view = src.view(idx);
  if (!view) {
    std::cerr << "switchyard: " << view.status().message() << "\n";
    return 1;
  }
  const int64_t row = t.shape.empty() ? 1 : t.shape[0];
  const uint64_t rows = row == 0 ? 0 : t.elements() / static_cast<uint64_t>(row);
  const uint64_t row_bytes = *storage_row_bytes(t.type, static_cast<uint64_t>(row));
  const std::string tmp = out_path + ".partial";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) {
    std::cerr << "switchyard: cannot write " << tmp << "\n";
    return 1;
  }
  std::vector<float> buf(static_cast<size_t>(row));
  bool ok = true;
  for (uint64_t r = 0; r < rows && ok; ++r) {
    ok = dequantize_row(t.type, view.value().data() + r * row_bytes, buf.data(), row).is_ok() &&
         std::fwrite(buf.data(), 4, buf.size(), f) == buf.size();
  }
  ok = std::fclose(f) == 0 && ok;
  if (!ok || std::rename(tmp.c_str(), out_path.c_str()) != 0) {
    std::remove(tmp.c_str());
    std::cerr << "switchyard: writing " << out_path << " failed\n";
    return 1;
  }
  std::cerr << "wrote " << t.elements() << " f32 values of '" << name << "' (" << storage_type_name(t.type) << ", shape "
            << shape_text(t.shape) << ") to " << out_path << "\n";
  return 0;
}

int run_inspect(const Args& a) {
  std::error_code ec;
  // A directory is a model in several files (a Hugging Face folder: config.json + safetensors).
  if (!std::filesystem::is_regular_file(a.model, ec) && !std::filesystem::is_directory(a.model, ec)) {
    std::cerr << "switchyard: model file " << text(a.model) << " does not exist or is not a file or folder\n";
    return 1;
  }
  std::vector<std::string> warnings;
  registry::Registry reg(registry::default_search_path({}, warnings));
  auto opened = model::open_source(reg, a.model);
  if (!opened) {
    std::cerr << "switchyard: " << text(opened.status().message()) << "\n";
    return 1;
  }
  const ModelSource& src = *opened->source;
  const std::string& fmt_name = opened->format_name;
  if (!a.dump.empty()) return dump_tensor(src, a.dump, a.out);
  const auto& md = src.metadata();
  const auto tensors = src.tensors();
  const std::string arch = md.get_string("general.architecture").value_or("");

  uint64_t params = 0, bytes = 0;
  std::map<std::string, std::pair<uint64_t, uint64_t>> by_type;  // name -> (tensors, bytes)
  for (const auto& t : tensors) {
    params += t.elements();
    bytes += t.bytes;
    auto& e = by_type[std::string(storage_type_name(t.type))];
    ++e.first;
    e.second += t.bytes;
  }
  std::vector<std::pair<std::string, const MetaValue*>> hparams;
  for (const auto& [k, v] : md.entries())
    if (!arch.empty() && k.rfind(arch + ".", 0) == 0) hparams.emplace_back(k, &v);
  const MetaValue* tokens = md.find("tokenizer.ggml.tokens");
  const size_t n_tokens = tokens && std::holds_alternative<MetaArray>(*tokens) ? std::get<MetaArray>(*tokens).items.size() : 0;
  const MetaValue* merges = md.find("tokenizer.ggml.merges");
  const size_t n_merges = merges && std::holds_alternative<MetaArray>(*merges) ? std::get<MetaArray>(*merges).items.size() : 0;
  const bool has_template = md.contains("tokenizer.chat_template");
  // The model's recommended sampling (generation_config.json or a GGUF's general.sampling.*),
  // which run and chat apply where the pipeline leaves the built-in defaults.
  std::vector<std::pair<std::string, const MetaValue*>> sampling;
  for (const auto& [k, v] : md.entries())
    if (k.rfind("general.sampling.", 0) == 0) sampling.emplace_back(k.substr(17), &v);
  const char* special[] = {"bos_token_id", "eos_token_id", "eot_token_id", "padding_token_id", "unknown_token_id"};

  if (a.json) {
    ordered_json out;
    out["path"] = text(a.model);
    out["format"] = fmt_name;
    out["architecture"] = text(arch);
    if (auto n = md.get_string("general.name")) out["name"] = text(*n);
    ordered_json hp = ordered_json::object();
    for (const auto& [k, v] : hparams) hp[text(k)] = to_json(*v);
    out["hyperparameters"] = hp;
    ordered_json tok = ordered_json::object();
    if (auto m = md.get_string("tokenizer.ggml.model")) tok["model"] = text(*m);
    if (auto p = md.get_string("tokenizer.ggml.pre")) tok["pre"] = text(*p);
    tok["tokens"] = n_tokens;
    tok["merges"] = n_merges;
    for (const char* s : special)
      if (auto id = md.get_int(std::string("tokenizer.ggml.") + s)) tok[s] = *id;
    out["tokenizer"] = tok;
    out["chat_template"] = has_template;
    ordered_json rs = ordered_json::object();
    for (const auto& [k, v] : sampling) rs[text(k)] = to_json(*v);
    out["recommended_sampling"] = rs;
    if (auto sk = md.get_string("general.source.skipped")) out["skipped"] = text(*sk);
    out["tensor_count"] = tensors.size();
    out["parameter_count"] = params;
    out["bytes"] = bytes;
    ordered_json bt = ordered_json::object();
    for (const auto& [name, e] : by_type) bt[name] = {{"tensors", e.first}, {"bytes", e.second}};
    out["bytes_by_type"] = bt;
    if (a.tensors) {
      ordered_json list = ordered_json::array();
      for (const auto& t : tensors)
        list.push_back({{"name", text(t.name)}, {"type", std::string(storage_type_name(t.type))}, {"shape", t.shape},
                        {"bytes", t.bytes}});
      out["tensors"] = list;
    }
    std::cout << json_text(out, 2) << "\n";
    return 0;
  }

  std::cout << "model:          " << text(a.model) << " (" << fmt_name << ")\n";
  std::cout << "architecture:   " << (arch.empty() ? "(not stated)" : text(arch)) << "\n";
  if (auto n = md.get_string("general.name")) std::cout << "name:           " << text(*n) << "\n";
  std::cout << "parameters:     " << human_count(params) << "\n";
  std::cout << "tensors:        " << tensors.size() << ", " << human_bytes(bytes) << "\n";
  for (const auto& [name, e] : by_type)
    std::printf("  %-8s %6llu tensors  %s\n", name.c_str(), static_cast<unsigned long long>(e.first),
                human_bytes(e.second).c_str());
  std::cout << std::flush;
  std::cout << "hyper-parameters:\n";
  for (const auto& [k, v] : hparams) std::cout << "  " << text(k) << " = " << short_text(*v) << "\n";
  std::cout << "tokenizer:      " << text(md.get_string("tokenizer.ggml.model").value_or("(none)"));
  if (auto p = md.get_string("tokenizer.ggml.pre")) std::cout << " (pre: " << text(*p) << ")";
  std::cout << ", " << n_tokens << " tokens";
  if (n_merges) std::cout << ", " << n_merges << " merges";
  for (const char* s : special)
    if (auto id = md.get_int(std::string("tokenizer.ggml.") + s)) std::cout << ", " << s << " " << *id;
  std::cout << "\nchat template:  " << (has_template ? "present" : "absent") << "\n";
  if (!sampling.empty()) {
    std::cout << "sampling:       ";
    for (size_t i = 0; i < sampling.size(); ++i)
      std::cout << (i ? ", " : "") << text(sampling[i].first) << " " << short_text(*sampling[i].second);
    std::cout << " (the model's recommendation)\n";
  }
  if (auto sk = md.get_string("general.source.skipped")) std::cout << "skipped:        " << text(*sk) << "\n";
  if (a.tensors) {
    std::cout << "\n";
    for (const auto& t : tensors)
      std::printf("  %-48s %-8s %-24s %s\n", text(t.name).c_str(), std::string(storage_type_name(t.type)).c_str(),
                  shape_text(t.shape).c_str(), human_bytes(t.bytes).c_str());
  }
  return 0;
}

}  // namespace

void add_inspect_command(CLI::App& app, Dispatch& d) {
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("inspect", "Show a model's architecture, hyper-parameters, tokenizer and tensors");
  cmd->add_option("model", args->model, "Model file (any shard of a split model works)")->required();
  cmd->add_flag("--json", args->json, "Print JSON");
  cmd->add_flag("--tensors", args->tensors, "List every tensor (name, type, shape, bytes)");
  auto* dump = cmd->add_option("--dump", args->dump, "Write this tensor dequantized to raw little-endian f32 (see --out)");
  cmd->add_option("--out", args->out, "Output file for --dump")->needs(dump);
  dump->needs(cmd->get_option("--out"));
  cmd->callback([&d, args] { d.run = [args] { return run_inspect(*args); }; });
}

}  // namespace sy::cli
