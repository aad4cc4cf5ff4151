#include "bench/depth_plot.hpp"

#include <map>
#include <tuple>

#include "bench/svg_plot.hpp"

namespace sy::bench {

std::string depth_svg(const std::vector<RowResult>& rows, const std::string& model) {
  // One series per (runtime, threads, n): a line only joins points that differ in depth.
  std::map<std::tuple<int, int, int64_t>, PlotSeries> lines;
  for (const auto& r : rows) {
    if (r.spec.gen <= 0) continue;
    const std::string threads = r.spec.threads > 0 ? std::to_string(r.spec.threads) : "auto";
    const std::string suffix = " (t=" + threads + ", tg" + std::to_string(r.spec.gen) + ")";
    const auto d = static_cast<double>(r.spec.depth);
    const Figures ours = our_figures(r);
    auto& a = lines[{0, r.spec.threads, r.spec.gen}];
    a.label = "switchyard" + suffix;
    a.points.push_back({d, ours.tg_ts.median, ours.tg_ts.sd});
    if (!r.peer.empty()) {
      const PeerFigures peer = peer_figures(r);
      auto& b = lines[{1, r.spec.threads, r.spec.gen}];
      b.label = "llama.cpp" + suffix;
      b.points.push_back({d, peer.tg_ts.median, peer.tg_ts.sd});
    }
  }
  std::vector<PlotSeries> series;
  for (auto& [key, s] : lines) series.push_back(std::move(s));
  return svg_line_chart(series, {"Generation speed against context depth: " + model, "tokens already in the context",
                                 "generated tokens/s (median; bars: sd)"});
}

}  // namespace sy::bench
