#include "bench/peer.hpp"

#include <nlohmann/json.hpp>

namespace sy::bench {

std::vector<std::string> peer_argv(const std::string& peer, const std::string& model, const RowSpec& row,
                                   const PeerFlags& f) {
  std::vector<std::string> a{peer, "-m", model, "-p", std::to_string(row.prompt), "-n", std::to_string(row.gen),
                             "-d", std::to_string(row.depth), "-r", "1", "-o", "json"};
  auto add = [&](const char* flag, const std::string& v) {
    if (!v.empty()) a.insert(a.end(), {flag, v});
  };
  if (row.threads > 0) add("-t", std::to_string(row.threads));
  add("-ngl", f.gpu_layers.empty() ? "0" : f.gpu_layers == "all" ? "999" : f.gpu_layers);
  // llama-bench has no --cpu-moe; a count beyond any layer count means every layer.
  add("-ncmoe", f.cpu_moe ? "999999" : f.n_cpu_moe);
  std::string ot;
  for (const auto& rules : f.override_tensor) {
    std::string r = rules;
    // Our -ot separates rules by commas outside {n,m}; llama-bench by ';' (its commas
    // separate alternative runs).
    int braces = 0;
    for (auto& c : r) {
      if (c == '{') ++braces;
      if (c == '}' && braces > 0) --braces;
      if (c == ',' && braces == 0) c = ';';
    }
    ot += (ot.empty() ? "" : ";") + r;
  }
  add("-ot", ot);
  add("-ctk", f.cache_type_k);
  add("-ctv", f.cache_type_v);
  if (!f.flash_attn.empty()) add("-fa", f.flash_attn);
  add("-b", f.batch);
  add("-ub", f.ubatch);
  add("-dev", f.device);
  if (f.no_mmap || f.mlock) add("-lm", f.no_mmap ? (f.mlock ? "mlock" : "none") : "mmap+mlock");
  return a;
}

Result<PeerRun> parse_peer_json(const std::string& text) {
  // llama-bench may print log lines before the JSON on stdout in some builds, and such a
  // line may itself open with '[' ("[INFO] ..."): each line that opens with '[' is tried
  // as the start of the JSON, the whole text last.
  nlohmann::json j;
  std::string why;
  bool parsed = false;
  for (size_t at = 0; at < text.size() && !parsed;) {
    if (text[at] == '[') {
      try {
        j = nlohmann::json::parse(text.substr(at));
        parsed = true;
      } catch (const std::exception& e) {
        why = e.what();
      }
    }
    const size_t nl = text.find('\n', at);
    if (nl == std::string::npos) break;
    at = nl + 1;
  }
  if (!parsed) {
    try {
      j = nlohmann::json::parse(text);
    } catch (const std::exception& e) {
      return error::corrupt(std::string("the peer's output is not llama-bench JSON (-o json): ") +
                            (why.empty() ? e.what() : why));
    }
  }
  if (!j.is_array() || j.empty())
    return error::corrupt("the peer's JSON is not a non-empty array of tests, as llama-bench -o json prints");
  PeerRun r;
  try {
  for (const auto& t : j) {
    if (!t.is_object() || !t.contains("n_prompt") || !t.contains("n_gen") || !t.contains("avg_ts"))
      return error::corrupt("a test in the peer's JSON lacks n_prompt, n_gen or avg_ts");
    const auto np = t["n_prompt"].get<int64_t>(), ng = t["n_gen"].get<int64_t>();
    const double ts = t["avg_ts"].get<double>();
    if (np > 0 && ng == 0) r.pp_ts = ts;
    else if (ng > 0 && np == 0) r.tg_ts = ts;
    if (t.contains("samples_ns") && t["samples_ns"].is_array())
      for (const auto& s : t["samples_ns"]) r.timed_s += s.get<double>() * 1e-9;
    r.build_commit = t.value("build_commit", std::string());
    r.build_number = t.value("build_number", int64_t{0});
    r.model_type = t.value("model_type", std::string());
    r.model_size = t.value("model_size", int64_t{0});
    r.model_n_params = t.value("model_n_params", int64_t{0});
    r.backends = t.value("backends", std::string());
    r.cpu_info = t.value("cpu_info", std::string());
  }
  } catch (const nlohmann::json::exception& e) {
    return error::corrupt(std::string("a field of the peer's JSON has an unexpected type: ") + e.what());
  }
  return r;
}

}  // namespace sy::bench
