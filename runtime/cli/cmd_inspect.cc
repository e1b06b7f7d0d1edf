// `gguflow inspect MODEL.gguf [--json] [--tensors]`: what is in a GGUF file.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "runtime/cli/args.h"
#include "runtime/cli/commands.h"
#include "runtime/cli/shared_options.h"
#include "ops/error.h"
#include "runtime/core/json.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/gguf/gguf_names.h"
#include "runtime/gguf/model_hparams.h"

namespace gguflow::cli {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

struct TypeTotals {
  uint64_t count = 0;
  uint64_t bytes = 0;
};

// Tensor bytes, or 0 for a type whose size cannot be computed (listed as such).
uint64_t bytes_or_zero(const GgufTensorInfo& t) {
  return ggml_type_info(t.type)->block_size ? t.n_bytes() : 0;
}

// "0,1,2,5,…" for a sorted list of layers, at most `max_shown` shown.
std::string layer_list(const std::vector<int>& layers, size_t max_shown = 12) {
  std::string out;
  for (size_t i = 0; i < layers.size() && i < max_shown; ++i) {
    if (i) out += ',';
    out += std::to_string(layers[i]);
  }
  if (layers.size() > max_shown) out += ",…";
  return out;
}

// role -> type name -> layers holding that role in that type (-1 outside blocks).
using RoleMix = std::map<std::string, std::map<std::string, std::vector<int>>>;

RoleMix role_mix(const GgufFile& file) {
  RoleMix mix;
  for (const auto& t : file.tensors()) {
    names::TensorRole role = names::tensor_role(t.name);
    mix[role.role][t.type_name()].push_back(role.layer);
  }
  for (auto& [role, by_type] : mix)
    for (auto& [type, layers] : by_type) std::sort(layers.begin(), layers.end());
  return mix;
}

struct Summary {
  std::map<std::string, TypeTotals> by_type;
  uint64_t tensor_bytes = 0;
  uint64_t parameters = 0;
};

Summary summarize(const GgufFile& file) {
  Summary s;
  for (const auto& t : file.tensors()) {
    auto& totals = s.by_type[t.type_name()];
    totals.count++;
    totals.bytes += bytes_or_zero(t);
    s.tensor_bytes += bytes_or_zero(t);
    s.parameters += t.n_elements();
  }
  return s;
}

std::string shape_string(const GgufTensorInfo& t) {
  std::string out = "[";
  for (size_t i = 0; i < t.dims.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(t.dims[i]);
  }
  out += ']';
  return out;
}

std::string tokenizer_kind(const GgufFile& file, uint64_t* n_tokens) {
  *n_tokens = 0;
  if (const GgufValue* tokens = file.find(names::kTokenizerTokens)) *n_tokens = tokens->type == GgufValueType::kArray ? tokens->array_size() : 0;
  const GgufValue* model = file.find(names::kTokenizerModel);
  return model && model->type == GgufValueType::kString ? std::string(model->str) : "";
}

// Hyperparameters when the file describes a model (a tokenizer-only file may not).
bool try_hparams(const GgufFile& file, ModelHparams* h, std::string* why) {
  try {
    *h = read_model_hparams(file);
    return true;
  } catch (const Error& e) {
    *why = e.what();
    return false;
  }
}

void print_text(const GgufFile& file, bool list_tensors) {
  Summary s = summarize(file);
  std::printf("file:          %s (%.2f MiB)\n", file.path().c_str(), file.file_bytes() / kMiB);
  std::printf("GGUF version:  %u, %zu metadata keys, %zu tensors, alignment %llu\n",
              file.version(), file.metadata().size(), file.tensors().size(),
              static_cast<unsigned long long>(file.alignment()));
  std::string arch = file.architecture();
  std::printf("architecture:  %s\n", arch.empty() ? "(none)" : arch.c_str());
  if (const GgufValue* name = file.find(names::kModelName); name && name->type == GgufValueType::kString)
    std::printf("name:          %.*s\n", static_cast<int>(name->str.size()), name->str.data());

  ModelHparams h;
  std::string why;
  if (try_hparams(file, &h, &why)) {
    std::printf("layers %lld, embedding %lld, heads %lld, KV heads %lld, head dim %lld, FFN %lld\n",
                (long long)h.n_layer, (long long)h.n_embd, (long long)h.n_head,
                (long long)h.n_head_kv, (long long)h.head_dim, (long long)h.n_ff);
    char positions[96];
    if (h.learned_positions)
      std::snprintf(positions, sizeof positions, "learned positions (position_embd)");
    else
      std::snprintf(positions, sizeof positions, "rope base %g (%s, %lld dims)", h.rope_freq_base,
                    h.rope_neox ? "neox" : "normal", (long long)h.n_rot);
    std::printf("context %lld, %s, %s eps %g, vocab %lld%s\n", (long long)h.n_ctx_train, positions,
                h.layer_norm ? "layer-norm" : "rms", h.rms_eps, (long long)h.n_vocab,
                h.encoder ? ", encoder (bidirectional attention)"
                          : h.tied_output ? ", output tied to token_embd" : "");
  } else if (!file.tensors().empty()) {
    std::printf("hyperparameters: unavailable (%s)\n", why.c_str());
  }
  uint64_t n_tokens = 0;
  std::string tok = tokenizer_kind(file, &n_tokens);
  if (!tok.empty()) std::printf("tokenizer:     %s, %llu tokens\n", tok.c_str(), (unsigned long long)n_tokens);

  std::printf("parameters:    %llu (%.2f M)\n", (unsigned long long)s.parameters, s.parameters / 1e6);
  if (s.parameters)
    std::printf("tensor data:   %.2f MiB, %.3f bits per weight\n", s.tensor_bytes / kMiB,
                8.0 * s.tensor_bytes / s.parameters);
  if (!s.by_type.empty()) {
    std::printf("\ntype mix:\n");
    for (const auto& [type, totals] : s.by_type)
      std::printf("  %-8s %5llu tensors %10.2f MiB\n", type.c_str(),
                  (unsigned long long)totals.count, totals.bytes / kMiB);
    std::printf("\nper tensor role:\n");
    for (const auto& [role, by_type] : role_mix(file)) {
      std::printf("  %-22s", role.c_str());
      bool first = true;
      for (const auto& [type, layers] : by_type) {
        std::printf("%s%s", first ? " " : "; ", type.c_str());
        if (layers.front() >= 0)
          std::printf(" x%zu [%s]", layers.size(), layer_list(layers).c_str());
        first = false;
      }
      std::printf("\n");
    }
  }
  if (list_tensors) {
    std::printf("\n%-36s %-8s %-22s %12s %12s\n", "tensor", "type", "shape", "bytes", "offset");
    for (const auto& t : file.tensors())
      std::printf("%-36s %-8s %-22s %12llu %12llu\n", t.name.c_str(), t.type_name(),
                  shape_string(t).c_str(), (unsigned long long)bytes_or_zero(t),
                  (unsigned long long)(file.data_offset() + t.offset));
  }
}

void print_json(const GgufFile& file, bool list_tensors) {
  Summary s = summarize(file);
  Json j = {{"file", file.path()},
            {"version", file.version()},
            {"architecture", file.architecture()},
            {"tensor_count", file.tensors().size()},
            {"kv_count", file.metadata().size()},
            {"parameters", s.parameters},
            {"file_bytes", file.file_bytes()},
            {"tensor_bytes", s.tensor_bytes}};
  if (s.parameters) j["bits_per_weight"] = 8.0 * s.tensor_bytes / s.parameters;
  ModelHparams h;
  std::string why;
  if (try_hparams(file, &h, &why)) {
    j["hparams"] = {{"n_layer", h.n_layer},       {"n_embd", h.n_embd},
                    {"n_head", h.n_head},         {"n_head_kv", h.n_head_kv},
                    {"head_dim", h.head_dim},     {"n_ff", h.n_ff},
                    {"n_ctx_train", h.n_ctx_train}, {"n_vocab", h.n_vocab},
                    {"rope_freq_base", h.rope_freq_base}, {"rope_neox", h.rope_neox},
                    {"n_rot", h.n_rot},           {h.layer_norm ? "layer_norm_eps" : "rms_eps", h.rms_eps},
                    {"encoder", h.encoder},       {"tied_output", h.tied_output},
                    {"learned_positions", h.learned_positions}};
  }
  uint64_t n_tokens = 0;
  const std::string tok = tokenizer_kind(file, &n_tokens);
  j["tokenizer"] = {{"model", tok}, {"tokens", n_tokens}};
  Json& type_mix = j["type_mix"] = Json::object();
  for (const auto& [type, totals] : s.by_type) type_mix[type] = totals.count;
  Json& type_bytes = j["type_bytes"] = Json::object();
  for (const auto& [type, totals] : s.by_type) type_bytes[type] = totals.bytes;
  if (list_tensors) {
    Json& tensors = j["tensors"] = Json::array();
    for (const auto& t : file.tensors())
      tensors.push_back({{"name", t.name},
                         {"type", t.type_name()},
                         {"shape", t.dims},
                         {"bytes", bytes_or_zero(t)},
                         {"offset", file.data_offset() + t.offset}});
  }
  std::printf("%s\n", json_text(j).c_str());
}

}  // namespace

int run_inspect(int argc, char** argv) {
  Args args("inspect (MODEL.gguf | -m MODEL.gguf) [--json] [--tensors]",
            "Prints a GGUF file's version, architecture, hyperparameters, tokenizer, parameter\n"
            "count, bits per weight and tensor type mix (per type and per tensor role).");
  args.positional("MODEL.gguf", "the file to inspect").positional_count(0, 1);
  model_alias_option(args);
  args.flag("--json", "print one JSON document instead of text");
  args.flag("--tensors", "list every tensor: name, type, shape, bytes, absolute offset");
  if (!args.parse(argc, argv)) return 0;
  auto file = GgufFile::open(model_argument(args, 0, nullptr));
  if (args.has("--json")) print_json(*file, args.has("--tensors"));
  else print_text(*file, args.has("--tensors"));
  return 0;
}

}  // namespace gguflow::cli
