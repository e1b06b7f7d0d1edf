// The op vocabulary's data types: what an op declares (inputs, weight slots, attributes, outputs,
// a shape function) and the values a bound graph gives it (shapes, attributes).
//
// Shapes follow GGUF/ggml order everywhere, activations included: dims[0] (ne0) is the
// contiguous, inner dimension. A weight [n_in, n_out] is n_out rows of n_in values; an activation
// [n_embd, T] is T rows (one per token) of n_embd floats. `kTokenDim` stands for T, the number of
// tokens in a step, which is only known at run time.
//
// This header is below the runtime: no YAML, no GGUF, no flow graph.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace gguflow::ops {

// The symbolic token dimension T inside a `Shape`.
inline constexpr int64_t kTokenDim = -1;

struct Shape {
  std::vector<int64_t> dims;  // ne0 first; kTokenDim marks T

  size_t rank() const { return dims.size(); }
  int64_t operator[](size_t i) const { return dims[i]; }
  bool operator==(const Shape&) const = default;
  // Elements with T = `n_tokens`.
  int64_t elements(int64_t n_tokens) const;
  // "[384, T]"
  std::string to_string() const;
};

enum class DType : uint8_t { kF32, kI32 };
const char* dtype_name(DType type);  // "f32", "i32"

// An attribute value. Ints stay ints (a float attribute accepts an int value).
using AttrValue = std::variant<bool, int64_t, double, std::string>;
std::string attr_to_string(const AttrValue& value);  // YAML-ready text: 1e-05, normal, true

enum class AttrType : uint8_t { kInt, kFloat, kBool, kString, kEnum };
const char* attr_type_name(AttrType type);

// Resolved attributes of one node, in the op's declaration order, defaults filled in.
// Accessors abort (GGUFLOW-style invariant) on a name the op does not declare: a bound graph
// always carries every declared attribute except optional ones without default.
class Attrs {
 public:
  std::vector<std::pair<std::string, AttrValue>> values;

  bool has(std::string_view name) const;
  const AttrValue& get(std::string_view name) const;
  int64_t get_int(std::string_view name) const;
  double get_float(std::string_view name) const;  // int values convert
  bool get_bool(std::string_view name) const;
  const std::string& get_string(std::string_view name) const;  // kString and kEnum
  void set(std::string name, AttrValue value);
};

// What each op declares. Field names are the YAML keys of a node using the op, so they share
// one namespace per op (checked by the registry's self-test).

// What the session writes, each step, into a graph input that this slot reads. A graph input
// read by no slot with a feed is an error (the executor would not know what to put there).
enum class Feed : uint8_t {
  kNone,
  kTokenIds,   // the step's token ids, i32 [T]
  kPositions,  // their positions in the sequence, i32 [T]
};
const char* feed_name(Feed feed);  // "", "token ids", "positions"

struct InputSpec {
  const char* name;
  bool optional;
  DType dtype;
  const char* help;
  Feed feed = Feed::kNone;
  // For a kTokenIds slot: the weight slot whose rows the ids index (the vocabulary size is its
  // row count, so the session rejects ids outside it before a step), or -1.
  int indexes_weight = -1;
};

struct WeightSpec {
  const char* name;
  bool optional;  // the op runs without it (e.g. a bias)
  const char* help;
};

struct AttrSpec {
  const char* name;
  AttrType type;
  bool required;              // no default: every node must give it
  AttrValue default_value;    // used when !required and the node does not give it
  std::vector<std::string> choices;  // kEnum only
  const char* help;
};

// Colour and grouping in pictures; also lets tools count matmuls etc.
enum class OpKind : uint8_t { kEmbed, kNorm, kMatmul, kPosition, kAttention, kActivation,
                              kElementwise, kPool, kProject };
const char* op_kind_name(OpKind kind);

// Inputs of a shape function: one entry per declared input / weight slot (nullptr when an
// optional one is absent), the names used in messages, and the node's resolved attributes.
struct ShapeQuery {
  std::vector<const Shape*> inputs;
  std::vector<std::string> input_names;   // tensor names as written ("h", "q")
  std::vector<const Shape*> weights;      // weight dims as a Shape (no T)
  std::vector<std::string> weight_names;  // GGUF tensor names
  const Attrs* attrs = nullptr;
};

// Fills `outputs` (one per declared output) and returns "" on success, or a message saying what
// was expected and what was found, naming both shapes (the caller adds file:line:column).
using ShapeFn = std::string (*)(const ShapeQuery& query, std::vector<Shape>* outputs);

struct OutputSpec {
  const char* name;
  DType dtype;
};

// The cache a kv_cache state needs: floats one cached token takes in the K and in the V block,
// and how far back a query looks (window > 0: the session keeps only the last window + step - 1
// positions, a ring; 0: every position of the context).
struct KvLayout {
  int64_t k = 0;
  int64_t v = 0;
  int64_t window = 0;
  // The writer reads its rows as f32 only (kv_project's low-rank coordinates): the session
  // refuses another cache type for the state with a clear error.
  bool f32_only = false;
  // KV heads a row of k and v elements splits into, which the session may keep in blocks of
  // their own (attention: n_head_kv; KvCacheView's head-major layout); 1: whole rows only.
  int64_t heads = 1;
};

// Checks that a declared state (its attributes as written: n_head_kv, head_dim, ...) fits the
// node, whose shapes are known, and says what cache it needs (row widths, window). Returns "" or a message
// saying what was expected and what was found.
using StateCheckFn = std::string (*)(const ShapeQuery& node, const Attrs& state, KvLayout* layout);

// Graph state an op reads and writes across steps, named by one of its string attributes.
// Such nodes have a side effect and are never pruned; a state has one writer.
struct StateRule {
  const char* kind = nullptr;  // the state's `kind:` ("kv_cache"); nullptr: the op is stateless
  const char* attr = "cache";  // the attribute naming the state
  StateCheckFn check = nullptr;
};

class Binder;
struct BoundOp;
// Binds one node for a session: typed attributes, weights, scratch; see ops/op_binder.h.
using BindFn = BoundOp (*)(Binder& node);

// One op: everything the graph front end, the executor and `gguflow ops` know of it. Each op
// defines its schema in its own unit (ops/<op>_op.cc); ops/op_registry.cc lists them.
struct OpSchema {
  const char* name;  // YAML `op:` value
  OpKind kind;
  const char* summary;
  std::vector<InputSpec> inputs;
  std::vector<WeightSpec> weights;
  std::vector<AttrSpec> attrs;
  std::vector<OutputSpec> outputs;
  // The shape rule in words, for `gguflow ops`: "x [n, T], weight [n] -> [n, T]".
  const char* shape_rule;
  ShapeFn shape;
  BindFn bind;
  StateRule state;

  int input_index(std::string_view n) const;   // -1 when absent
  int weight_index(std::string_view n) const;
  int attr_index(std::string_view n) const;
};

}  // namespace gguflow::ops
