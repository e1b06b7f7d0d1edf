// A dependency-free SVG line-plot writer: panels side by side, each with axes, tick labels,
// axis labels, one polyline (with point markers) per series and a legend. Used for
// `gguflow kv spectrum --svg` (energy vs rank, one line per layer, K and V panels) and
// `gguflow kv eval --sweep --svg` (error vs KV bytes per token).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace gguflow::lowrank {

struct PlotSeries {
  std::string label;                              // legend text, e.g. "layer 3"
  std::vector<std::pair<double, double>> points;  // (x, y), drawn in this order
};

struct PlotPanel {
  std::string title;     // above the panel, e.g. "K"
  std::string x_label;   // under the x axis
  std::string y_label;   // beside the y axis
  bool log2_x = false;   // x on a log2 scale (ranks 1, 2, 4, ...); points with x <= 0 are left out
  // Axis ranges; when min >= max they are taken from the data (y padded to a round range).
  double x_min = 0, x_max = 0, y_min = 0, y_max = 0;
  std::vector<PlotSeries> series;
  bool log10_y = false;  // y on a log10 scale (errors over decades); points with y <= 0 are left out
};

// The whole SVG document. Text is XML-escaped.
std::string render_svg(const std::string& title, const std::vector<PlotPanel>& panels);

// Writes render_svg() to `path`; throws gguflow::Error naming the file when it cannot.
void write_svg(const std::string& path, const std::string& title, const std::vector<PlotPanel>& panels);

}  // namespace gguflow::lowrank
