// The .kvproj.gguf side file (round trip, validation) and the SVG writer.
#include "runtime/lowrank/kv_projection.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "ops/error.h"
#include "runtime/gguf/gguf_writer.h"
#include "runtime/lowrank/svg_plot.h"
#include "tests/support/test_data.h"

namespace gguflow::lowrank {
namespace {

// A 2-layer, 2-head, head_dim 2 projection with per-head ranks (block-diagonal bases).
KvProjection small_projection() {
  KvProjection p;
  p.model_name = "tiny";
  p.model_file = "tiny.gguf";
  p.model_architecture = "llama";
  p.n_layer = 2;
  p.n_head_kv = 2;
  p.head_dim = 2;
  p.granularity = Granularity::kHead;
  p.energy_threshold = 0.9;
  p.calibration_text = "calib.txt";
  p.calibration_tokens = 123;
  for (int l = 0; l < 2; ++l)
    for (auto* set : {&p.k, &p.v}) {
      LayerBasis b;
      b.ranks = {1, 2};
      b.basis = {1, 0, 0, 0,                              // head 0: e0
                 0, 0, 1, 0, 0, 0, 0, 1};                 // head 1: e2, e3
      b.mean = {0.5f * l, 1, 2, 3};
      set->push_back(b);
    }
  return p;
}

std::string temp_file(const std::string& name) { return (test::temp_dir() / name).string(); }

TEST(KvProjectionFile, RoundTripKeepsEverything) {
  const KvProjection p = small_projection();
  const std::string path = temp_file("roundtrip.kvproj.gguf");
  write_kv_projection(p, path);
  const KvProjection r = read_kv_projection(path);
  EXPECT_EQ(r.model_name, "tiny");
  EXPECT_EQ(r.model_architecture, "llama");
  EXPECT_EQ(r.granularity, Granularity::kHead);
  EXPECT_DOUBLE_EQ(r.energy_threshold, 0.9);
  EXPECT_EQ(r.calibration_text, "calib.txt");
  EXPECT_EQ(r.calibration_tokens, 123);
  ASSERT_EQ(r.k.size(), 2u);
  EXPECT_EQ(r.k[1].ranks, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(r.v[1].basis, p.v[1].basis);
  EXPECT_EQ(r.k[1].mean, p.k[1].mean);
  EXPECT_EQ(r.full_floats_per_token(), 2 * 2 * 4);
  EXPECT_EQ(r.projected_floats_per_token(), 2 * 2 * 3);
  EXPECT_EQ(r.keys, KeyPosition::kPostRope);
}

// Keys fitted before RoPE: recorded, read back, and stored under their own tensor names.
TEST(KvProjectionFile, PreRopeKeysKeepTheirPositionAndNames) {
  KvProjection p = small_projection();
  p.keys = KeyPosition::kPreRope;
  const std::string path = temp_file("prerope.kvproj.gguf");
  write_kv_projection(p, path);
  const auto file = GgufFile::open(path);
  EXPECT_EQ(read_kv_projection(*file).keys, KeyPosition::kPreRope);
  EXPECT_NE(file->find_tensor("blk.1.kv_proj_k_pre.basis"), nullptr);
  EXPECT_EQ(file->find_tensor("blk.1.kv_proj_k.basis"), nullptr);
  EXPECT_NE(file->find_tensor("blk.1.kv_proj_v.basis"), nullptr);
  EXPECT_EQ(parse_key_position("pre-rope"), KeyPosition::kPreRope);
  EXPECT_THROW(parse_key_position("before"), Error);
}

TEST(KvProjectionFile, NonBlockDiagonalHeadBasisIsRejected) {
  // Write by hand (the writer checks only shapes): head 0's row touching head 1's values.
  KvProjection p = small_projection();
  p.k[0].basis[2] = 0.25f;
  const std::string path = temp_file("bad-block.kvproj.gguf");
  write_kv_projection(p, path);
  try {
    read_kv_projection(path);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("expected zero outside head 0"), std::string::npos) << e.what();
  }
}

TEST(KvProjectionFile, AModelFileIsNotAProjection) {
  GGUFLOW_REQUIRE_DATA("models/stories260K.gguf");
  try {
    read_kv_projection(test::data_path("models/stories260K.gguf").string());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("expected a KV projection file"), std::string::npos) << e.what();
  }
}

TEST(KvProjectionFile, MismatchWithTheModelNamesTheQuantity) {
  GGUFLOW_REQUIRE_DATA("models/stories260K.gguf");
  const KvProjection p = small_projection();  // "tiny", 2 layers: not stories260K
  auto model = GgufFile::open(test::data_path("models/stories260K.gguf").string());
  try {
    check_projection_matches_model(p, "tiny.kvproj.gguf", *model);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("does not fit model stories260K.gguf"), std::string::npos) << m;
    EXPECT_NE(m.find("general.name"), std::string::npos) << m;
  }
}

TEST(SvgPlot, PanelsSeriesAxesAndLegend) {
  PlotPanel k{"K", "rank", "energy", true, 1, 32, 0, 1, {}};
  k.series.push_back({"layer 0", {{1, 0.5}, {2, 0.7}, {32, 1.0}}});
  k.series.push_back({"layer <1>", {{1, 0.2}, {32, 1.0}}});
  PlotPanel v = k;
  v.title = "V";
  const std::string svg = render_svg("spectrum & more", {k, v});
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = svg.find(what); at != std::string::npos; at = svg.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_EQ(count("stroke-width=\"1.8\""), 4u);  // one polyline per series per panel
  EXPECT_EQ(count("<circle"), 10u);              // one marker per point
  EXPECT_NE(svg.find("layer &lt;1&gt;"), std::string::npos);  // escaped legend text
  EXPECT_NE(svg.find("spectrum &amp; more"), std::string::npos);
  EXPECT_NE(svg.find(">32</text>"), std::string::npos);  // log2 ticks reach the dimension
  EXPECT_NE(svg.find(">16</text>"), std::string::npos);
}

// A log10 y axis spans whole decades of the data and leaves out what it cannot place (y <= 0).
TEST(SvgPlot, Log10YAxisSpansDecadesAndLeavesOutZero) {
  PlotPanel p{"KL", "bytes", "nats", false, 0, 100, 0, 0, {{"method", {{10, 0.002}, {50, 0.3}, {90, 0.0}}}}};
  p.log10_y = true;
  const std::string svg = render_svg("errors", {p});
  size_t circles = 0;
  for (size_t at = svg.find("<circle"); at != std::string::npos; at = svg.find("<circle", at + 1)) ++circles;
  EXPECT_EQ(circles, 2u);
  for (const char* tick : {">0.001</text>", ">0.01</text>", ">0.1</text>", ">1</text>"})
    EXPECT_NE(svg.find(tick), std::string::npos) << tick;
  EXPECT_EQ(svg.find(">0.0001</text>"), std::string::npos);
}

}  // namespace
}  // namespace gguflow::lowrank
