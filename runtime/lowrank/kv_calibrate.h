// From collected keys/values to a spectrum report and to a projection: PCA per layer (or head)
// for K and V, energy curves, and ranks chosen by an energy threshold or one uniform rank.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "runtime/lowrank/kv_collect.h"

namespace gguflow::lowrank {

// PCA of every group, K and V.
struct KvAnalysis {
  Granularity granularity = Granularity::kLayer;
  KeyPosition keys = KeyPosition::kPostRope;
  int64_t n_layer = 0, groups = 0, group_dim = 0, tokens = 0;
  std::vector<Components> k, v;  // [n_layer * groups]
};
// Throws (naming the layer and K/V) when there are fewer than min_samples_for(group_dim) vectors.
KvAnalysis analyse(const KvSamples& samples);

// `gguflow kv spectrum` output: per group and K/V, energy at r = 1, 2, 4, ... dim and the ranks
// reaching 50/90/95/99 %. `model` names the source in the header / JSON.
void print_spectrum_text(const KvAnalysis& a, const std::string& model, FILE* out);
void print_spectrum_json(const KvAnalysis& a, const std::string& model, FILE* out);
// Energy vs rank (log2 x), one line per layer (per layer and head with granularity head).
void write_spectrum_svg(const KvAnalysis& a, const std::string& model, const std::string& path);

struct CalibrateOptions {
  double energy = 0;      // threshold in (0, 1], or 0 when `rank` is used
  int64_t rank = 0;       // uniform rank, or 0 when `energy` is used
  int64_t max_rank = 0;   // cap per group (0: none)
  std::string text_name;  // calibration text (file name, for the metadata)
};
// Throws for a threshold outside (0, 1], a rank outside 1..group dim, both or neither given.
void check_calibrate_options(const CalibrateOptions& o, int64_t group_dim);

// Ranks per group from the options, bases = the top eigenvectors (block-diagonal per head).
KvProjection make_projection(const KvAnalysis& a, const CalibrateOptions& o, const StudyModel& m);

// The schedule (rank per layer, per head with granularity head, for K and V) and the KV bytes
// per token, full vs projected (f32 caches).
void print_schedule(const KvProjection& p, FILE* out);

}  // namespace gguflow::lowrank
