#include "bench/svg_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace sy::bench {
namespace {

constexpr double kW = 720, kH = 420, kLeft = 70, kRight = 170, kTop = 40, kBottom = 60;
const char* const kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"};

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

// Tick labels: integers when the step is whole, one decimal otherwise.
std::string tick(double v, double step) {
  char b[32];
  std::snprintf(b, sizeof b, step >= 1 ? "%.0f" : "%.1f", v);
  return b;
}

std::string escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '<') o += "&lt;";
    else if (c == '>') o += "&gt;";
    else if (c == '&') o += "&amp;";
    else if (c == '"') o += "&quot;";
    else o += c;
  }
  return o;
}

// A "nice" tick step (1, 2 or 5 times a power of ten) giving about `n` ticks up to `max`.
double nice_step(double max, int n) {
  if (max <= 0) return 1;
  const double raw = max / n, p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * p) return m * p;
  return 10 * p;
}

}  // namespace

std::string svg_line_chart(const std::vector<PlotSeries>& series, const PlotText& text) {
  double xmin = INFINITY, xmax = -INFINITY, ymax = 0;
  for (const auto& s : series)
    for (const auto& p : s.points) {
      xmin = std::min(xmin, p.x);
      xmax = std::max(xmax, p.x);
      ymax = std::max(ymax, p.y + p.err);
    }
  if (!std::isfinite(xmin)) xmin = 0, xmax = 1;
  if (xmax <= xmin) xmax = xmin + 1;
  const double ystep = nice_step(ymax, 5), ytop = std::max(ystep, std::ceil(ymax / ystep) * ystep);
  const double pw = kW - kLeft - kRight, ph = kH - kTop - kBottom;
  const auto X = [&](double x) { return kLeft + (x - xmin) / (xmax - xmin) * pw; };
  const auto Y = [&](double y) { return kTop + ph - y / ytop * ph; };

  std::string o = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(kW) + "\" height=\"" + num(kH) +
                  "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  o += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  o += "<text x=\"" + num(kW / 2) + "\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">" + escape(text.title) + "</text>\n";
  // Axes, grid and ticks.
  for (double y = 0; y <= ytop + ystep / 2; y += ystep) {
    o += "<line x1=\"" + num(kLeft) + "\" y1=\"" + num(Y(y)) + "\" x2=\"" + num(kLeft + pw) + "\" y2=\"" + num(Y(y)) +
         "\" stroke=\"#ddd\"/>\n";
    o += "<text x=\"" + num(kLeft - 6) + "\" y=\"" + num(Y(y) + 4) + "\" text-anchor=\"end\">" + tick(y, ystep) + "</text>\n";
  }
  std::vector<double> xs;
  for (const auto& s : series)
    for (const auto& p : s.points) xs.push_back(p.x);
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  for (double x : xs)
    o += "<text x=\"" + num(X(x)) + "\" y=\"" + num(kTop + ph + 18) + "\" text-anchor=\"middle\">" + tick(x, 1) +
         "</text>\n";
  o += "<line x1=\"" + num(kLeft) + "\" y1=\"" + num(kTop + ph) + "\" x2=\"" + num(kLeft + pw) + "\" y2=\"" +
       num(kTop + ph) + "\" stroke=\"black\"/>\n";
  o += "<line x1=\"" + num(kLeft) + "\" y1=\"" + num(kTop) + "\" x2=\"" + num(kLeft) + "\" y2=\"" + num(kTop + ph) +
       "\" stroke=\"black\"/>\n";
  o += "<text x=\"" + num(kLeft + pw / 2) + "\" y=\"" + num(kH - 18) + "\" text-anchor=\"middle\">" +
       escape(text.x_label) + "</text>\n";
  o += "<text transform=\"translate(18," + num(kTop + ph / 2) + ") rotate(-90)\" text-anchor=\"middle\">" +
       escape(text.y_label) + "</text>\n";
  // Lines, points, error bars and the legend.
  for (size_t i = 0; i < series.size(); ++i) {
    const std::string color = kColors[i % (sizeof kColors / sizeof kColors[0])];
    auto pts = series[i].points;
    std::sort(pts.begin(), pts.end(), [](const PlotPoint& a, const PlotPoint& b) { return a.x < b.x; });
    std::string path;
    for (const auto& p : pts) path += (path.empty() ? "" : " ") + num(X(p.x)) + "," + num(Y(p.y));
    o += "<polyline fill=\"none\" stroke=\"" + color + "\" stroke-width=\"2\" points=\"" + path + "\"/>\n";
    for (const auto& p : pts) {
      o += "<circle cx=\"" + num(X(p.x)) + "\" cy=\"" + num(Y(p.y)) + "\" r=\"3.5\" fill=\"" + color + "\"/>\n";
      if (p.err > 0)
        o += "<line x1=\"" + num(X(p.x)) + "\" y1=\"" + num(Y(std::max(0.0, p.y - p.err))) + "\" x2=\"" + num(X(p.x)) +
             "\" y2=\"" + num(Y(p.y + p.err)) + "\" stroke=\"" + color + "\"/>\n";
    }
    const double ly = kTop + 10 + 20.0 * static_cast<double>(i);
    o += "<line x1=\"" + num(kLeft + pw + 15) + "\" y1=\"" + num(ly) + "\" x2=\"" + num(kLeft + pw + 35) + "\" y2=\"" +
         num(ly) + "\" stroke=\"" + color + "\" stroke-width=\"2\"/>\n";
    o += "<text x=\"" + num(kLeft + pw + 40) + "\" y=\"" + num(ly + 4) + "\">" + escape(series[i].label) + "</text>\n";
  }
  o += "</svg>\n";
  return o;
}

}  // namespace sy::bench
