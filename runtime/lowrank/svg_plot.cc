#include "runtime/lowrank/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>

#include "ops/error.h"

namespace gguflow::lowrank {
namespace {

// Panel geometry in SVG user units (pixels).
constexpr double kPanelW = 480, kPanelH = 340;
constexpr double kLeft = 64, kRight = 150, kTop = 36, kBottom = 52;  // margins; legend on the right
constexpr double kTitleH = 32;                                       // document title band

// Colour-blind-friendly palette (Okabe-Ito, then Tableau), cycled.
constexpr const char* kColours[] = {"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7",
                                    "#56B4E9", "#F0E442", "#000000", "#8c564b", "#7f7f7f"};

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string tick_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", std::fabs(v) < 1e-12 ? 0.0 : v);
  return buf;
}

// A "nice" step (1, 2 or 5 times a power of ten) giving about `n` intervals over `span`.
double nice_step(double span, int n) {
  const double raw = span / n;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * mag) return m * mag;
  return 10 * mag;
}

// A linear axis (base 0) or a logarithmic one (base 2: ranks; base 10: errors over decades).
struct Axis {
  double lo, hi;
  double base;
  double f(double v) const { return base == 2 ? std::log2(v) : base == 10 ? std::log10(v) : v; }
  bool shows(double v) const { return base == 0 || v > 0; }  // a log axis has no place for v <= 0
  double map(double v, double a, double b) const {  // data -> [a, b]
    return a + (f(v) - f(lo)) / (f(hi) - f(lo)) * (b - a);
  }
  std::vector<double> ticks() const {
    std::vector<double> t;
    if (base > 0) {  // every power of the base in range
      for (double v = std::pow(base, std::ceil(f(lo) - 1e-9)); v <= hi * (1 + 1e-9); v *= base) t.push_back(v);
      return t;
    }
    const double step = nice_step(hi - lo, 5);
    for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step) t.push_back(v);
    return t;
  }
};

Axis make_axis(const PlotPanel& p, bool x) {
  double lo = x ? p.x_min : p.y_min, hi = x ? p.x_max : p.y_max;
  const double base = x ? (p.log2_x ? 2 : 0) : (p.log10_y ? 10 : 0);
  if (lo >= hi) {
    lo = std::numeric_limits<double>::infinity();
    hi = -lo;
    for (const auto& s : p.series)
      for (const auto& [px, py] : s.points) {
        const double v = x ? px : py;
        if (base > 0 && v <= 0) continue;
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
    if (!(lo <= hi)) lo = base > 0 ? 1 : 0, hi = base > 0 ? base : 1;
    if (hi == lo) hi = base > 0 ? lo * base : lo + 1;
    if (base == 10) {  // whole decades
      lo = std::pow(10.0, std::floor(std::log10(lo)));
      hi = std::pow(10.0, std::ceil(std::log10(hi)));
    } else if (base == 0) {  // round outwards to the tick step
      const double step = nice_step(hi - lo, 5);
      lo = std::floor(lo / step) * step;
      hi = std::ceil(hi / step) * step;
    }
  }
  return {lo, hi, base};
}

void render_panel(std::string& svg, const PlotPanel& p, double ox, double oy) {
  const Axis ax = make_axis(p, true), ay = make_axis(p, false);
  const double x0 = ox + kLeft, x1 = ox + kPanelW - kRight;
  const double y0 = oy + kPanelH - kBottom, y1 = oy + kTop;  // y0 bottom, y1 top
  svg += "<g>\n";
  svg += "<text x=\"" + num((x0 + x1) / 2) + "\" y=\"" + num(oy + 22) +
         "\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">" + escape(p.title) + "</text>\n";
  // Grid and ticks.
  for (double t : ax.ticks()) {
    const double x = ax.map(t, x0, x1);
    svg += "<line x1=\"" + num(x) + "\" y1=\"" + num(y0) + "\" x2=\"" + num(x) + "\" y2=\"" + num(y1) +
           "\" stroke=\"#e0e0e0\"/>\n";
    svg += "<text x=\"" + num(x) + "\" y=\"" + num(y0 + 16) + "\" text-anchor=\"middle\" font-size=\"11\">" +
           tick_text(t) + "</text>\n";
  }
  for (double t : ay.ticks()) {
    const double y = ay.map(t, y0, y1);
    svg += "<line x1=\"" + num(x0) + "\" y1=\"" + num(y) + "\" x2=\"" + num(x1) + "\" y2=\"" + num(y) +
           "\" stroke=\"#e0e0e0\"/>\n";
    svg += "<text x=\"" + num(x0 - 6) + "\" y=\"" + num(y + 4) + "\" text-anchor=\"end\" font-size=\"11\">" +
           tick_text(t) + "</text>\n";
  }
  // Axes and labels.
  svg += "<polyline points=\"" + num(x0) + "," + num(y1) + " " + num(x0) + "," + num(y0) + " " + num(x1) + "," +
         num(y0) + "\" fill=\"none\" stroke=\"#000\"/>\n";
  svg += "<text x=\"" + num((x0 + x1) / 2) + "\" y=\"" + num(y0 + 36) +
         "\" text-anchor=\"middle\" font-size=\"12\">" + escape(p.x_label) + "</text>\n";
  svg += "<text x=\"" + num(ox + 16) + "\" y=\"" + num((y0 + y1) / 2) +
         "\" text-anchor=\"middle\" font-size=\"12\" transform=\"rotate(-90 " + num(ox + 16) + " " +
         num((y0 + y1) / 2) + ")\">" + escape(p.y_label) + "</text>\n";
  // Series: a polyline, point markers, and a legend entry to the right of the plot.
  for (size_t i = 0; i < p.series.size(); ++i) {
    const PlotSeries& s = p.series[i];
    const std::string colour = kColours[i % std::size(kColours)];
    std::string pts;
    std::string marks;
    for (const auto& [x, y] : s.points) {
      if (!ax.shows(x) || !ay.shows(y)) continue;
      const double sx = ax.map(x, x0, x1), sy = ay.map(y, y0, y1);
      pts += num(sx) + "," + num(sy) + " ";
      marks += "<circle cx=\"" + num(sx) + "\" cy=\"" + num(sy) + "\" r=\"2.5\" fill=\"" + colour + "\"/>\n";
    }
    svg += "<polyline points=\"" + pts + "\" fill=\"none\" stroke=\"" + colour + "\" stroke-width=\"1.8\"/>\n";
    svg += marks;
    const double ly = y1 + 8 + 18 * static_cast<double>(i);
    svg += "<line x1=\"" + num(x1 + 10) + "\" y1=\"" + num(ly) + "\" x2=\"" + num(x1 + 30) + "\" y2=\"" +
           num(ly) + "\" stroke=\"" + colour + "\" stroke-width=\"2.5\"/>\n";
    svg += "<text x=\"" + num(x1 + 34) + "\" y=\"" + num(ly + 4) + "\" font-size=\"11\">" + escape(s.label) +
           "</text>\n";
  }
  svg += "</g>\n";
}

}  // namespace

std::string render_svg(const std::string& title, const std::vector<PlotPanel>& panels) {
  const double width = kPanelW * static_cast<double>(std::max<size_t>(1, panels.size()));
  const double height = kPanelH + kTitleH;
  std::string svg = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(width) + "\" height=\"" + num(height) +
         "\" viewBox=\"0 0 " + num(width) + " " + num(height) + "\" font-family=\"sans-serif\">\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n";
  svg += "<text x=\"" + num(width / 2) + "\" y=\"22\" text-anchor=\"middle\" font-size=\"16\">" + escape(title) +
         "</text>\n";
  for (size_t i = 0; i < panels.size(); ++i) render_panel(svg, panels[i], kPanelW * static_cast<double>(i), kTitleH);
  svg += "</svg>\n";
  return svg;
}

void write_svg(const std::string& path, const std::string& title, const std::vector<PlotPanel>& panels) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw error(path, ": cannot open for writing the SVG plot");
  out << render_svg(title, panels);
  out.close();
  if (!out) throw error(path, ": write failed");
}

}  // namespace gguflow::lowrank
