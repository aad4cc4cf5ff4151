// bench's SVG chart: one line per series, the y axis from 0, text escaped.
#include <catch2/catch.hpp>

#include <string>

#include "bench/svg_plot.hpp"

using namespace sy::bench;

namespace {

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("svg_line_chart draws each series with its points and legend", "[bench]") {
  const std::vector<PlotSeries> series{
      {"switchyard", {{0, 10, 1}, {4096, 8, 0.5}, {16384, 5, 0}}},
      {"llama.cpp <peer>", {{0, 8, 0}, {4096, 7, 0}, {16384, 4, 0}}},
  };
  const std::string svg = svg_line_chart(series, {"tg64 & depth", "depth (tokens)", "tokens/s"});
  CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
  CHECK(svg.find("</svg>") != std::string::npos);
  CHECK(count(svg, "<polyline") == 2);
  CHECK(count(svg, "<circle") == 6);
  // Error bars only where a deviation was given (two points of the first series).
  CHECK(count(svg, "<line") - count(svg, "stroke=\"#ddd\"") - 2 /* axes */ - 2 /* legend */ == 2);
  CHECK(svg.find("llama.cpp &lt;peer&gt;") != std::string::npos);
  CHECK(svg.find("tg64 &amp; depth") != std::string::npos);
  // Depth labels as given, and a zero on the y axis.
  CHECK(svg.find(">16384</text>") != std::string::npos);
  CHECK(svg.find(">0</text>") != std::string::npos);
}

TEST_CASE("svg_line_chart with no points is still a valid empty chart", "[bench]") {
  const std::string svg = svg_line_chart({}, {"t", "x", "y"});
  CHECK(svg.find("</svg>") != std::string::npos);
  CHECK(count(svg, "<polyline") == 0);
}
