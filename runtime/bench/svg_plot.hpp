// A line chart as a standalone SVG file: generation speed against context depth for one or
// more runtimes (`bench --svg`). Plain SVG 1.1 text, no scripts or external fonts, so it
// renders the same in a browser, on GitHub and in docs.
#pragma once

#include <string>
#include <vector>

namespace sy::bench {

struct PlotPoint {
  double x = 0, y = 0;
  double err = 0;  ///< half-height of the error bar (a standard deviation); 0 draws none
};

struct PlotSeries {
  std::string label;
  std::vector<PlotPoint> points;  ///< drawn in x order
};

struct PlotText {
  std::string title, x_label, y_label;
};

/// The chart; the y axis starts at 0 so ratios between lines read true.
std::string svg_line_chart(const std::vector<PlotSeries>& series, const PlotText& text);

}  // namespace sy::bench
