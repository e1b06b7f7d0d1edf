#include "runtime/lowrank/kv_projection.h"

#include <cmath>
#include <filesystem>
#include <numeric>

#include "ops/error.h"
#include "runtime/gguf/gguf_writer.h"
#include "runtime/graph/graph_choice.h"
#include "runtime/gguf/model_hparams.h"

namespace gguflow::lowrank {
namespace {

// Metadata keys of the side file (one place; the reader and the writer share them).
constexpr const char* kArchitecture = "kvproj";
constexpr const char* kSourceName = "kvproj.source.name";
constexpr const char* kSourceFile = "kvproj.source.file";
constexpr const char* kSourceArch = "kvproj.source.architecture";
constexpr const char* kNLayer = "kvproj.n_layer";
constexpr const char* kNHeadKv = "kvproj.n_head_kv";
constexpr const char* kHeadDim = "kvproj.head_dim";
constexpr const char* kGranularity = "kvproj.granularity";
constexpr const char* kKeys = "kvproj.keys";
constexpr const char* kEnergy = "kvproj.energy_threshold";
constexpr const char* kUniformRank = "kvproj.uniform_rank";
constexpr const char* kMaxRank = "kvproj.max_rank";
constexpr const char* kCalibText = "kvproj.calibration.text";
constexpr const char* kCalibTokens = "kvproj.calibration.tokens";
constexpr const char* kKRanks = "kvproj.k_ranks";
constexpr const char* kVRanks = "kvproj.v_ranks";

void check_consistent(const KvProjection& p) {
  GGUFLOW_CHECK(p.n_layer > 0 && p.n_head_kv > 0 && p.head_dim > 0);
  GGUFLOW_CHECK(static_cast<int64_t>(p.k.size()) == p.n_layer);
  GGUFLOW_CHECK(static_cast<int64_t>(p.v.size()) == p.n_layer);
  for (const auto* set : {&p.k, &p.v})
    for (const LayerBasis& b : *set) {
      GGUFLOW_CHECK(static_cast<int64_t>(b.ranks.size()) == p.groups());
      GGUFLOW_CHECK(static_cast<int64_t>(b.basis.size()) == b.rank() * p.dim());
      GGUFLOW_CHECK(static_cast<int64_t>(b.mean.size()) == p.dim());
      GGUFLOW_CHECK(b.rank() >= 1);
    }
}

std::string file_name(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

}  // namespace

const char* granularity_name(Granularity g) { return g == Granularity::kHead ? "head" : "layer"; }

Granularity parse_granularity(const std::string& s) {
  if (s == "layer") return Granularity::kLayer;
  if (s == "head") return Granularity::kHead;
  throw error("--granularity: expected 'layer' or 'head', found '", s, "'");
}

int64_t LayerBasis::rank() const { return std::accumulate(ranks.begin(), ranks.end(), int64_t{0}); }

int64_t KvProjection::projected_floats_per_token() const {
  int64_t n = 0;
  for (int64_t l = 0; l < n_layer; ++l) n += k[l].rank() + v[l].rank();
  return n;
}

const char* key_position_name(KeyPosition k) { return k == KeyPosition::kPreRope ? "pre-rope" : "post-rope"; }

KeyPosition parse_key_position(const std::string& s) {
  if (s == "post-rope") return KeyPosition::kPostRope;
  if (s == "pre-rope") return KeyPosition::kPreRope;
  throw error("--keys: expected 'post-rope' or 'pre-rope', found '", s, "'");
}

std::string projected_graph_path(const GgufFile& model, KeyPosition k) {
  const std::filesystem::path family = graph::default_graph_path(model, graph::Job::kGenerate);
  const std::string name =
      family.stem().string() + (k == KeyPosition::kPreRope ? "-lowrank-kv-prerope" : "-lowrank-kv") + ".yaml";
  const std::filesystem::path path = family.parent_path() / name;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw error("no low-rank KV graph (keys ", key_position_name(k), ") for this model's family: expected ",
                path.string(), " beside its graph ", family.filename().string(),
                " (decode-lowrank-kv.yaml and qwen3-lowrank-kv.yaml show how one extends its family's graph)");
  return path.string();
}

namespace {

std::string tensor_stem(int64_t layer, char kv, KeyPosition keys) {
  return "blk." + std::to_string(layer) + ".kv_proj_" + kv +
         (kv == 'k' && keys == KeyPosition::kPreRope ? "_pre" : "");
}

}  // namespace

std::string basis_tensor_name(int64_t layer, char kv, KeyPosition keys) {
  return tensor_stem(layer, kv, keys) + ".basis";
}
std::string mean_tensor_name(int64_t layer, char kv, KeyPosition keys) {
  return tensor_stem(layer, kv, keys) + ".mean";
}

void write_kv_projection(const KvProjection& p, const std::string& path) {
  check_consistent(p);
  GgufWriter w(path);
  w.set_string("general.architecture", kArchitecture);
  w.set_string("general.name", "kv projection of " + (p.model_name.empty() ? p.model_file : p.model_name));
  w.set_string(kSourceName, p.model_name);
  w.set_string(kSourceFile, p.model_file);
  w.set_string(kSourceArch, p.model_architecture);
  w.set_u32(kNLayer, static_cast<uint32_t>(p.n_layer));
  w.set_u32(kNHeadKv, static_cast<uint32_t>(p.n_head_kv));
  w.set_u32(kHeadDim, static_cast<uint32_t>(p.head_dim));
  w.set_string(kGranularity, granularity_name(p.granularity));
  w.set_string(kKeys, key_position_name(p.keys));
  if (p.energy_threshold > 0) w.set_f64(kEnergy, p.energy_threshold);
  if (p.uniform_rank > 0) w.set_u32(kUniformRank, static_cast<uint32_t>(p.uniform_rank));
  w.set_u32(kMaxRank, static_cast<uint32_t>(p.max_rank));
  w.set_string(kCalibText, p.calibration_text);
  w.set_u64(kCalibTokens, static_cast<uint64_t>(p.calibration_tokens));
  std::vector<int32_t> k_ranks, v_ranks;
  for (int64_t l = 0; l < p.n_layer; ++l) {
    for (int64_t r : p.k[l].ranks) k_ranks.push_back(static_cast<int32_t>(r));
    for (int64_t r : p.v[l].ranks) v_ranks.push_back(static_cast<int32_t>(r));
  }
  w.set_i32_array(kKRanks, k_ranks);
  w.set_i32_array(kVRanks, v_ranks);

  const uint64_t d = static_cast<uint64_t>(p.dim());
  for (int64_t l = 0; l < p.n_layer; ++l)
    for (char kv : {'k', 'v'}) {
      const LayerBasis& b = kv == 'k' ? p.k[l] : p.v[l];
      const uint64_t basis_dims[] = {d, static_cast<uint64_t>(b.rank())};
      const uint64_t mean_dims[] = {d};
      w.add_tensor(basis_tensor_name(l, kv, p.keys), GGML_TYPE_F32, basis_dims);
      w.add_tensor(mean_tensor_name(l, kv, p.keys), GGML_TYPE_F32, mean_dims);
    }
  w.write_header();
  for (int64_t l = 0; l < p.n_layer; ++l)
    for (char kv : {'k', 'v'}) {
      const LayerBasis& b = kv == 'k' ? p.k[l] : p.v[l];
      w.write_tensor_data(b.basis.data(), sizeof(float) * b.basis.size());
      w.write_tensor_data(b.mean.data(), sizeof(float) * b.mean.size());
    }
  w.finish();
}

KvProjection read_kv_projection(const GgufFile& f) {
  const std::string where = f.path();
  if (f.architecture() != kArchitecture)
    throw error(where, ": expected a KV projection file (general.architecture '", kArchitecture,
                "', written by 'gguflow kv calibrate'), found architecture '", f.architecture(), "'");
  auto get_int = [&](const char* key) { return f.get(key).as_int(key); };
  auto get_string = [&](const char* key) { return std::string(f.get(key).as_string(key)); };
  KvProjection p;
  p.model_name = get_string(kSourceName);
  p.model_file = get_string(kSourceFile);
  p.model_architecture = get_string(kSourceArch);
  p.n_layer = get_int(kNLayer);
  p.n_head_kv = get_int(kNHeadKv);
  p.head_dim = get_int(kHeadDim);
  if (p.n_layer <= 0 || p.n_head_kv <= 0 || p.head_dim <= 0)
    throw error(where, ": expected positive ", kNLayer, ", ", kNHeadKv, " and ", kHeadDim, ", found ",
                p.n_layer, ", ", p.n_head_kv, " and ", p.head_dim);
  try {
    p.granularity = parse_granularity(get_string(kGranularity));
  } catch (const Error& e) {
    throw error(where, ": ", kGranularity, ": ", e.what());
  }
  // Files from before pre-rope keys existed have no kvproj.keys: their keys are post-rope.
  if (f.find(kKeys)) {
    try {
      p.keys = parse_key_position(get_string(kKeys));
    } catch (const Error& e) {
      throw error(where, ": ", kKeys, ": ", e.what());
    }
  }
  if (const GgufValue* e = f.find(kEnergy)) p.energy_threshold = e->as_double(kEnergy);
  if (const GgufValue* r = f.find(kUniformRank)) p.uniform_rank = r->as_int(kUniformRank);
  p.max_rank = get_int(kMaxRank);
  p.calibration_text = get_string(kCalibText);
  p.calibration_tokens = get_int(kCalibTokens);

  const int64_t d = p.dim(), groups = p.groups(), group_dim = d / groups;
  for (char kv : {'k', 'v'}) {
    const char* key = kv == 'k' ? kKRanks : kVRanks;
    const std::vector<int64_t> ranks = f.get(key).as_int_array(key);
    if (static_cast<int64_t>(ranks.size()) != p.n_layer * groups)
      throw error(where, ": ", key, ": expected ", p.n_layer * groups, " ranks (n_layer * ",
                  groups, " groups), found ", ranks.size());
    auto& set = kv == 'k' ? p.k : p.v;
    set.resize(static_cast<size_t>(p.n_layer));
    for (int64_t l = 0; l < p.n_layer; ++l) {
      LayerBasis& b = set[l];
      b.ranks.assign(ranks.begin() + l * groups, ranks.begin() + (l + 1) * groups);
      for (int64_t r : b.ranks)
        if (r < 1 || r > group_dim)
          throw error(where, ": ", key, " layer ", l, ": expected ranks in 1..", group_dim, ", found ", r);
      const std::string basis_name = basis_tensor_name(l, kv, p.keys),
                        mean_name = mean_tensor_name(l, kv, p.keys);
      const GgufTensorInfo& bt = f.tensor(basis_name);
      const GgufTensorInfo& mt = f.tensor(mean_name);
      const std::vector<uint64_t> want_basis{static_cast<uint64_t>(d), static_cast<uint64_t>(b.rank())};
      const std::vector<uint64_t> want_mean{static_cast<uint64_t>(d)};
      if (bt.type != GGML_TYPE_F32 || bt.dims != want_basis || mt.type != GGML_TYPE_F32 || mt.dims != want_mean)
        throw error(where, ": tensors ", basis_name, " and ", mean_name, ": expected F32 [", d, ", ",
                    b.rank(), "] and F32 [", d, "] (from ", key, "), found ", bt.type_name(), " with ",
                    bt.dims.size(), " dims (ne1 ", bt.dims.size() > 1 ? bt.dims[1] : 0, ") and ",
                    mt.type_name());
      const auto* bf = reinterpret_cast<const float*>(f.tensor_bytes(bt).data());
      const auto* mf = reinterpret_cast<const float*>(f.tensor_bytes(mt).data());
      b.basis.assign(bf, bf + b.rank() * d);
      b.mean.assign(mf, mf + d);
      // Head blocks: rows of group g are zero outside g's slice of the cache row.
      int64_t row = 0;
      for (int64_t g = 0; g < groups; ++g)
        for (int64_t j = 0; j < b.ranks[g]; ++j, ++row)
          for (int64_t i = 0; i < d; ++i)
            if (i / group_dim != g && b.basis[row * d + i] != 0.0f)
              throw error(where, ": ", basis_name, " row ", row, ": expected zero outside head ", g,
                          "'s values (granularity head), found ", b.basis[row * d + i], " at ", i);
    }
  }
  return p;
}

KvProjection read_kv_projection(const std::string& path) { return read_kv_projection(*GgufFile::open(path)); }

void check_projection_matches_model(const KvProjection& p, const std::string& projection_path,
                                    const GgufFile& model) {
  const ModelHparams h = read_model_hparams(model);
  std::string model_name;
  if (const GgufValue* n = model.find("general.name")) model_name = std::string(n->as_string("general.name"));
  const std::string both = "projection " + file_name(projection_path) + " (made for " +
                           (p.model_name.empty() ? p.model_file : p.model_name) + ") does not fit model " +
                           file_name(model.path());
  auto mismatch = [&](const char* what, const auto& expected, const auto& found) {
    throw error(both, ": ", what, ": the model has ", expected, ", the projection has ", found);
  };
  if (model_name != p.model_name) mismatch("general.name", "'" + model_name + "'", "'" + p.model_name + "'");
  if (h.architecture != p.model_architecture) mismatch("architecture", h.architecture, p.model_architecture);
  if (h.n_layer != p.n_layer) mismatch("layers", h.n_layer, p.n_layer);
  if (h.n_head_kv != p.n_head_kv) mismatch("KV heads", h.n_head_kv, p.n_head_kv);
  if (h.head_dim != p.head_dim) mismatch("head size", h.head_dim, p.head_dim);
}

}  // namespace gguflow::lowrank
