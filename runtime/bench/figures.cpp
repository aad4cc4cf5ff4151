#include "bench/figures.hpp"

#include <algorithm>

namespace sy::bench {
namespace {

double tokens_per_s(int64_t tokens, double ms) { return ms > 0 ? 1000.0 * static_cast<double>(tokens) / ms : 0.0; }

}  // namespace

Figures our_figures(const RowResult& r) {
  Figures f;
  std::vector<double> pp, tg, ttft, load;
  for (const auto& s : r.ours) {
    if (r.spec.prompt > 0) pp.push_back(tokens_per_s(r.spec.prompt, s.prompt_ms));
    if (r.spec.gen > 0) tg.push_back(tokens_per_s(r.spec.gen, s.gen_ms));
    ttft.push_back(s.ttft_ms);
    load.push_back(s.load_ms / 1000.0);
    f.peak_rss = std::max(f.peak_rss, s.peak_rss);
  }
  f.pp_ts = summarize(pp);
  f.tg_ts = summarize(tg);
  if (r.spec.prompt > 0) f.ttft_ms = summarize(ttft).mean;
  f.load_s = summarize(load).mean;
  const double file = r.info.value("file_bytes", 0.0);
  if (file > 0) f.rss_over_file = static_cast<double>(f.peak_rss) / file;
  if (r.info.contains("bytes_per_token")) f.bytes_per_token = r.info["bytes_per_token"].value("total", 0.0);
  if (r.bandwidth > 0 && r.spec.gen > 0) f.bandwidth_share = f.bytes_per_token * f.tg_ts.mean / r.bandwidth;
  return f;
}

PeerFigures peer_figures(const RowResult& r) {
  PeerFigures f;
  std::vector<double> pp, tg, load;
  for (const auto& s : r.peer) {
    if (r.spec.prompt > 0) pp.push_back(s.run.pp_ts);
    if (r.spec.gen > 0) tg.push_back(s.run.tg_ts);
    load.push_back(s.load_s);
    f.peak_rss = std::max(f.peak_rss, s.peak_rss);
  }
  f.pp_ts = summarize(pp);
  f.tg_ts = summarize(tg);
  f.load_s = summarize(load);
  return f;
}

}  // namespace sy::bench
