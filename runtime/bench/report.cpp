#include "bench/report.hpp"

#include <cstdio>
#include <sstream>

namespace sy::bench {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// GiB as llama-bench prints sizes, MiB below one GiB so small models do not read 0.00.
std::string bytes_str(double b) { return b >= kGiB ? fmt("%.2f GiB", b / kGiB) : fmt("%.2f MiB", b / (1024.0 * 1024.0)); }

std::string ts(const Summary& s) { return s.n ? fmt("%.2f", s.mean) + " ± " + fmt("%.2f", s.sd) : ""; }

std::string params(double n) { return n >= 1e8 ? fmt("%.2f B", n / 1e9) : fmt("%.2f M", n / 1e6); }

std::string threads(const RowSpec& r) { return r.threads > 0 ? std::to_string(r.threads) : "auto"; }

std::string ratio(double a, double b) { return b > 0 ? fmt("%.2fx", a / b) : ""; }

struct Line {
  std::vector<std::string> cells;
};

std::string table(const std::vector<std::string>& head, const std::vector<std::string>& align,
                  const std::vector<Line>& lines) {
  std::ostringstream o;
  o << "|";
  for (const auto& h : head) o << " " << h << " |";
  o << "\n|";
  for (const auto& a : align) o << (a == "r" ? " ---: |" : " --- |");
  o << "\n";
  for (const auto& l : lines) {
    o << "|";
    for (const auto& c : l.cells) o << " " << c << " |";
    o << "\n";
  }
  return o.str();
}

nlohmann::ordered_json summary_json(const Summary& s, const std::vector<double>& samples) {
  return {{"mean", s.mean}, {"sd", s.sd}, {"median", s.median}, {"min", s.min}, {"max", s.max}, {"samples", samples}};
}

}  // namespace

std::string markdown(const std::vector<RowResult>& rows) {
  const bool compare = !rows.empty() && !rows.front().peer.empty();
  std::vector<Line> lines;
  for (const auto& r : rows) {
    const Figures f = our_figures(r);
    const std::string model = r.info.value("model", std::string());
    const std::string size = bytes_str(r.info.value("file_bytes", 0.0));
    const std::string n_params = params(r.info.value("n_params", 0.0));
    const std::string backend = r.info.value("devices", std::string("cpu"));
    const std::string rss = bytes_str(static_cast<double>(f.peak_rss));
    if (!compare) {
      auto add = [&](const std::string& test, const Summary& s, bool gen) {
        lines.push_back({{model, size, n_params, backend, threads(r.spec), test, ts(s),
                          gen ? "" : fmt("%.1f", f.ttft_ms), fmt("%.3f", f.load_s), rss, fmt("%.2f", f.rss_over_file),
                          gen ? fmt("%.3f", f.bytes_per_token / 1e9) : "",
                          gen && f.bandwidth_share > 0 ? fmt("%.0f%%", 100 * f.bandwidth_share) : ""}});
      };
      if (r.spec.prompt > 0) add(test_name("pp", r.spec.prompt, r.spec.depth), f.pp_ts, false);
      if (r.spec.gen > 0) add(test_name("tg", r.spec.gen, r.spec.depth), f.tg_ts, true);
      continue;
    }
    const PeerFigures p = peer_figures(r);
    const std::string peer_rss = bytes_str(static_cast<double>(p.peak_rss));
    auto add = [&](const std::string& test, const Summary& ours, const Summary& peer) {
      const std::string t = threads(r.spec);
      lines.push_back({{model, t, test, "switchyard", ts(ours), fmt("%.2f", ours.median),
                        fmt("%.2f", ours.min) + "-" + fmt("%.2f", ours.max), fmt("%.3f", f.load_s), rss}});
      lines.push_back({{model, t, test, "llama.cpp", ts(peer), fmt("%.2f", peer.median),
                        fmt("%.2f", peer.min) + "-" + fmt("%.2f", peer.max), fmt("%.3f", p.load_s.median), peer_rss}});
      lines.push_back({{model, t, test, "ours / peer", "", ratio(ours.median, peer.median), "",
                        ratio(f.load_s, p.load_s.median), ratio(static_cast<double>(f.peak_rss), static_cast<double>(p.peak_rss))}});
    };
    if (r.spec.prompt > 0) add(test_name("pp", r.spec.prompt, r.spec.depth), f.pp_ts, p.pp_ts);
    if (r.spec.gen > 0) add(test_name("tg", r.spec.gen, r.spec.depth), f.tg_ts, p.tg_ts);
  }
  if (compare)
    return table({"model", "threads", "test", "runtime", "t/s", "median t/s", "min-max t/s", "load s", "peak RSS"},
                 {"l", "r", "l", "l", "r", "r", "r", "r", "r"}, lines);
  return table({"model", "size", "params", "backend", "threads", "test", "t/s", "ttft ms", "load s", "peak RSS",
                "RSS / file", "GB / token", "of bandwidth"},
               {"l", "r", "r", "l", "r", "l", "r", "r", "r", "r", "r", "r", "r"}, lines);
}

std::string csv(const std::vector<RowResult>& rows) {
  const bool compare = !rows.empty() && !rows.front().peer.empty();
  std::ostringstream o;
  o << "model,backend,n_threads,n_prompt,n_gen,n_depth,repetitions,pp_ts,pp_ts_sd,tg_ts,tg_ts_sd,ttft_ms,load_s,"
       "peak_rss_bytes,rss_over_file,bytes_per_token,bandwidth_bytes_per_s,bandwidth_share";
  if (compare) o << ",peer_pp_ts_median,peer_tg_ts_median,peer_load_s_median,peer_peak_rss_bytes,pp_ratio,tg_ratio";
  o << "\n";
  for (const auto& r : rows) {
    const Figures f = our_figures(r);
    // Names are quoted as CSV requires; a quote inside is doubled.
    std::string model = r.info.value("model", std::string());
    std::string q = "\"";
    for (char c : model) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    q += "\"";
    o << q << "," << r.info.value("devices", std::string("cpu")) << "," << r.spec.threads << "," << r.spec.prompt << ","
      << r.spec.gen << "," << r.spec.depth << "," << r.ours.size() << "," << f.pp_ts.mean << "," << f.pp_ts.sd << ","
      << f.tg_ts.mean << "," << f.tg_ts.sd << "," << f.ttft_ms << "," << f.load_s << "," << f.peak_rss << ","
      << f.rss_over_file << "," << f.bytes_per_token << "," << r.bandwidth << "," << f.bandwidth_share;
    if (compare) {
      const PeerFigures p = peer_figures(r);
      o << "," << p.pp_ts.median << "," << p.tg_ts.median << "," << p.load_s.median << "," << p.peak_rss << ","
        << (p.pp_ts.median > 0 ? f.pp_ts.median / p.pp_ts.median : 0) << ","
        << (p.tg_ts.median > 0 ? f.tg_ts.median / p.tg_ts.median : 0);
    }
    o << "\n";
  }
  return o.str();
}

nlohmann::ordered_json json(const RunInfo& info, const std::vector<RowResult>& rows) {
  nlohmann::ordered_json j;
  j["build"] = {{"version", info.version}};
  nlohmann::ordered_json bw = nlohmann::ordered_json::array();
  for (const auto& [t, b] : info.bandwidth) bw.push_back({{"threads", t}, {"bytes_per_s", b}});
  j["machine"] = {{"cpu", info.cpu}, {"hw_threads", info.hw_threads}, {"bandwidth", bw}};
  j["rows"] = nlohmann::ordered_json::array();
  for (const auto& r : rows) {
    const Figures f = our_figures(r);
    nlohmann::ordered_json row;
    row["model"] = r.info.value("model", std::string());
    row["arch"] = r.info.value("arch", std::string());
    row["devices"] = r.info.value("devices", std::string());
    row["path"] = r.info.value("path", std::string());
    row["file_bytes"] = r.info.value("file_bytes", uint64_t{0});
    row["n_params"] = r.info.value("n_params", uint64_t{0});
    row["kv_type"] = r.info.value("kv_type", std::string());
    row["n_prompt"] = r.spec.prompt;
    row["n_gen"] = r.spec.gen;
    row["n_depth"] = r.spec.depth;
    row["n_threads"] = r.spec.threads;  // 0: the pipeline's default
    row["repetitions"] = r.ours.size();
    std::vector<double> pp, tg;
    for (const auto& s : r.ours) {
      if (r.spec.prompt > 0) pp.push_back(1000.0 * static_cast<double>(r.spec.prompt) / s.prompt_ms);
      if (r.spec.gen > 0) tg.push_back(1000.0 * static_cast<double>(r.spec.gen) / s.gen_ms);
    }
    if (r.spec.prompt > 0) row["pp_ts"] = summary_json(f.pp_ts, pp);
    if (r.spec.gen > 0) row["tg_ts"] = summary_json(f.tg_ts, tg);
    row["ttft_ms"] = f.ttft_ms;
    row["load_s"] = f.load_s;
    row["peak_rss_bytes"] = f.peak_rss;
    row["rss_over_file"] = f.rss_over_file;
    row["bytes_per_token"] = r.info.contains("bytes_per_token") ? r.info["bytes_per_token"] : nlohmann::ordered_json{};
    row["bandwidth_bytes_per_s"] = r.bandwidth;
    row["bandwidth_share"] = f.bandwidth_share;
    for (const auto& s : r.ours)
      row["samples"].push_back({{"load_ms", s.load_ms}, {"prompt_ms", s.prompt_ms}, {"ttft_ms", s.ttft_ms},
                                {"gen_ms", s.gen_ms}, {"peak_rss_bytes", s.peak_rss}});
    if (!r.peer.empty()) {
      const PeerFigures p = peer_figures(r);
      const auto& first = r.peer.front().run;
      nlohmann::ordered_json peer;
      peer["path"] = info.peer;
      peer["build_commit"] = first.build_commit;
      peer["build_number"] = first.build_number;
      peer["model_type"] = first.model_type;
      peer["backends"] = first.backends;
      std::vector<double> ppp, ptg, pload;
      for (const auto& s : r.peer) ppp.push_back(s.run.pp_ts), ptg.push_back(s.run.tg_ts), pload.push_back(s.load_s);
      if (r.spec.prompt > 0) peer["pp_ts"] = summary_json(p.pp_ts, ppp);
      if (r.spec.gen > 0) peer["tg_ts"] = summary_json(p.tg_ts, ptg);
      peer["load_s_estimate"] = summary_json(p.load_s, pload);
      peer["peak_rss_bytes"] = p.peak_rss;
      for (const auto& s : r.peer) peer["peak_rss_samples"].push_back(s.peak_rss);
      row["peer"] = peer;
      nlohmann::ordered_json ratios;
      if (r.spec.prompt > 0 && p.pp_ts.median > 0) ratios["pp_ts_median"] = f.pp_ts.median / p.pp_ts.median;
      if (r.spec.gen > 0 && p.tg_ts.median > 0) ratios["tg_ts_median"] = f.tg_ts.median / p.tg_ts.median;
      if (p.peak_rss > 0) ratios["peak_rss"] = static_cast<double>(f.peak_rss) / static_cast<double>(p.peak_rss);
      if (p.load_s.median > 0) ratios["load_s"] = f.load_s / p.load_s.median;
      row["ratio_ours_over_peer"] = ratios;
    }
    j["rows"].push_back(row);
  }
  return j;
}

}  // namespace sy::bench
