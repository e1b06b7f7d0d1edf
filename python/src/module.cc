// The extension module `gguflow._native`: pybind11 conversions around PythonModel
// (python_model.h), which holds all the logic. The Python package (python/gguflow/__init__.py)
// re-exports it; python/gguflow/_native.pyi gives the types.
//
// Threads: every call that runs the graph releases the GIL (other Python threads run meanwhile)
// and takes the model's mutex (one Session per model: calls on one model run one at a time).
// gguflow::Error becomes gguflow.Error (a ValueError) with the CLI's message. A callback
// (on_text) that calls into the same Model raises gguflow.Error instead of waiting on the lock
// its own thread holds.
//
// Text: a model may generate bytes that are not UTF-8 (a byte-fallback token cut off, or any
// token of a random-weight model); they reach Python as U+FFFD, as in `gguflow run --json`,
// rather than as a UnicodeDecodeError that would lose the whole reply.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <thread>

#include "ops/error.h"
#include "python/src/python_model.h"

namespace py = pybind11;

namespace gguflow::python {
namespace {

// PythonModel with the lock that serializes calls on it.
struct BoundModel {
  explicit BoundModel(const ModelOptions& o) : model(o) {}
  PythonModel model;
  std::mutex mutex;
  std::atomic<std::thread::id> holder{};  // the thread inside a call, if any
};

// Holds BoundModel::mutex for one call (taken with the GIL released). The same thread asking
// again can only be a callback of the running call: refused, where waiting would never end.
class CallLock {
 public:
  explicit CallLock(BoundModel& m) : m_(m) {
    if (m_.holder.load() == std::this_thread::get_id())
      throw error("a callback called back into the Model that is running it; calls on one Model "
                  "run one at a time (use another Model, or call after this one returns)");
    m_.mutex.lock();
    m_.holder.store(std::this_thread::get_id());
  }
  ~CallLock() {
    m_.holder.store(std::thread::id{});
    m_.mutex.unlock();
  }
  CallLock(const CallLock&) = delete;
  CallLock& operator=(const CallLock&) = delete;

 private:
  BoundModel& m_;
};

// Text for Python: invalid UTF-8 becomes U+FFFD (see the top of this file).
py::str utf8_text(std::string_view bytes) {
  PyObject* text = PyUnicode_DecodeUTF8(bytes.data(), static_cast<Py_ssize_t>(bytes.size()), "replace");
  if (!text) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(text);
}

// The thread id of Python's main thread (the one signal handlers run on).
unsigned long main_thread_ident() {
  static const unsigned long ident =
      py::module_::import("threading").attr("main_thread")().attr("ident").cast<unsigned long>();
  return ident;
}

// A seed: None, or an integer in 0..2^64-1 (any 64-bit pattern seeds; a drawn one is below 2^63).
std::optional<uint64_t> seed_arg(const py::object& seed) {
  if (seed.is_none()) return std::nullopt;
  // Anything with __index__ (int, numpy.int64), not bool and not float.
  if (PyBool_Check(seed.ptr()) || !PyIndex_Check(seed.ptr()))
    throw py::type_error("seed: expected an integer or None, found " +
                         std::string(py::str(py::type::of(seed).attr("__name__"))));
  const py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(seed.ptr()));
  if (!index) throw py::error_already_set();
  const unsigned long long value = PyLong_AsUnsignedLongLong(index.ptr());
  if (PyErr_Occurred()) {
    PyErr_Clear();
    throw error("seed: expected an integer from 0 to 2^64-1 or None, found ",
                std::string(py::str(seed)));
  }
  return static_cast<uint64_t>(value);
}

// A float vector moved into a NumPy array of `shape` that owns it (no copy).
py::array_t<float> to_numpy(std::vector<float>&& values, std::vector<py::ssize_t> shape) {
  auto* owned = new std::vector<float>(std::move(values));
  py::capsule free_when_done(owned, [](void* p) { delete static_cast<std::vector<float>*>(p); });
  return py::array_t<float>(shape, owned->data(), free_when_done);
}

template <typename T>
std::optional<T> optional_arg(const py::object& o) {
  if (o.is_none()) return std::nullopt;
  return o.cast<T>();
}

std::unique_ptr<BoundModel> make_model(const std::string& path, const std::optional<std::string>& graph,
                                       std::optional<int> threads, const std::optional<std::string>& kernels,
                                       std::optional<int64_t> ctx) {
  ModelOptions o;
  o.path = path;
  if (graph) o.graph = *graph;
  if (threads) {
    if (*threads < 1) throw error("threads: expected a count of at least 1, found ", *threads);
    o.threads = *threads;
  }
  if (ctx) o.ctx = *ctx;
  if (kernels) o.kernels = *kernels;
  py::gil_scoped_release released;  // mapping and plugin loading touch no Python object
  return std::make_unique<BoundModel>(o);
}

py::str generate(BoundModel& m, const std::string& prompt, int64_t n_predict,
                 py::object temperature, py::object seed, py::object top_k, py::object top_p,
                 py::object min_p, py::object repeat_penalty, bool special, py::object on_text) {
  GenerateRequest r;
  r.n_predict = n_predict;
  r.sampling.temperature = optional_arg<float>(temperature);
  r.sampling.top_k = optional_arg<int>(top_k);
  r.sampling.top_p = optional_arg<float>(top_p);
  r.sampling.min_p = optional_arg<float>(min_p);
  r.sampling.repeat_penalty = optional_arg<float>(repeat_penalty);
  r.sampling.seed = seed_arg(seed);
  r.parse_special = special;
  if (!on_text.is_none() && !PyCallable_Check(on_text.ptr()))
    throw py::type_error("on_text: expected a callable or None");
  // Back under the GIL for each piece when there is a callback (Python code). Without one, only
  // to look for Ctrl-C (a pending KeyboardInterrupt ends generation there), which Python
  // delivers to the main thread alone: there, at most every 100 ms, so that a token does not
  // wait for the GIL behind another busy Python thread each time.
  const bool main_thread = PyThread_get_thread_ident() == main_thread_ident();
  using Clock = std::chrono::steady_clock;
  Clock::time_point last_check = Clock::now();
  std::function<void(std::string_view)> sink;
  if (!on_text.is_none() || main_thread)
    sink = [&](std::string_view text) {
      if (on_text.is_none() && Clock::now() - last_check < std::chrono::milliseconds(100)) return;
      py::gil_scoped_acquire held;
      last_check = Clock::now();
      if (main_thread && PyErr_CheckSignals() != 0) throw py::error_already_set();
      if (!on_text.is_none()) on_text(utf8_text(text));
    };
  std::string text;
  {
    py::gil_scoped_release released;
    CallLock lock(m);
    text = m.model.generate(prompt, r, sink);
  }
  return utf8_text(text);
}

py::array_t<float> embed(BoundModel& m, const std::vector<std::string>& texts,
                         const std::optional<std::string>& pooling, bool normalize) {
  EmbedRequest r;
  if (pooling) r.pooling = *pooling;
  r.normalize = normalize ? "l2" : "none";
  EmbedResult e;
  {
    py::gil_scoped_release released;
    CallLock lock(m);
    e = m.model.embed(texts, r);
  }
  return to_numpy(std::move(e.values), {static_cast<py::ssize_t>(texts.size()), e.dim});
}

py::array_t<float> logits(BoundModel& m, const std::vector<int32_t>& ids) {
  int64_t n_vocab = 0;
  std::vector<float> all;
  {
    py::gil_scoped_release released;
    CallLock lock(m);
    all = m.model.logits(ids, &n_vocab);
  }
  return to_numpy(std::move(all), {static_cast<py::ssize_t>(ids.size()), n_vocab});
}

// `gguflow kernels --json`'s plugin list: what was found, whether it runs here, which is chosen.
py::list kernels(const std::optional<std::string>& forced) {
  plugins::SelectOptions options;
  if (forced) options.forced = *forced;
  options.search_dirs = plugin_search_dirs();
  const auto candidates = plugins::scan_plugins(options);
  const plugins::SelectedKernels& selected = plugins::select_kernels(candidates, options);
  py::list out;
  for (const auto& c : candidates) {
    py::dict d;
    d["name"] = c.name;
    d["target"] = c.target;
    d["path"] = c.path.string();
    d["usable"] = c.usable;
    d["reason"] = c.reason;
    d["selected"] = c.path == selected.plugin.path;
    out.append(d);
  }
  return out;
}

}  // namespace
}  // namespace gguflow::python

PYBIND11_MODULE(_native, m) {
  using namespace gguflow::python;
  m.doc() = "gguflow: GGUF language models on CPUs as dataflow graphs (native part).";
  static py::exception<gguflow::Error> error_type(m, "Error", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const gguflow::Error& e) {
      PyErr_SetString(error_type.ptr(), e.what());
    }
  });

  py::class_<BoundModel>(m, "Model", R"doc(A GGUF model, memory-mapped, with its tokenizer and kernel plugin.

path: the .gguf file. graph: a generation graph YAML (default: the shipped one for the
architecture). threads: worker threads (default: every core). ctx: context in tokens (default:
min(model, 4096)). kernels: a kernel plugin name such as "avx2" (default: $GGUFLOW_KERNELS, else
the best this CPU runs). Raises gguflow.Error with the CLI's message for a bad file or option.
Calls on one Model run one at a time; each releases the GIL while the graph runs.)doc")
      .def(py::init(&make_model), py::arg("path"), py::arg("graph") = py::none(),
           py::arg("threads") = py::none(), py::arg("kernels") = py::none(),
           py::arg("ctx") = py::none())
      .def_property_readonly("path", [](const BoundModel& b) { return b.model.path(); })
      .def_property_readonly("vocab_size", [](const BoundModel& b) { return b.model.vocab_size(); },
                             "Tokens in the vocabulary.")
      .def_property_readonly("kernels",
                             [](const BoundModel& b) { return b.model.kernels().describe(); },
                             "The kernel plugin in use, as `gguflow kernels` describes it.")
      .def(
          "tokenize",
          [](const BoundModel& b, const std::string& text, bool add_special, bool special) {
            return b.model.tokenize(text, add_special, special);
          },
          py::arg("text"), py::arg("add_special") = true, py::arg("special") = false,
          "Token ids of `text` (BOS/EOS as the vocabulary says unless add_special=False; "
          "special=True parses control-token text such as <|im_start|>).")
      .def(
          "detokenize",
          [](const BoundModel& b, const std::vector<int32_t>& ids) { return utf8_text(b.model.detokenize(ids)); },
          py::arg("ids"), "The text of token ids, decoded as a whole sequence.")
      .def("generate", &generate, py::arg("prompt"), py::arg("n_predict") = -1,
           py::arg("temperature") = py::none(), py::arg("seed") = py::none(),
           py::arg("top_k") = py::none(), py::arg("top_p") = py::none(),
           py::arg("min_p") = py::none(), py::arg("repeat_penalty") = py::none(),
           py::arg("special") = false, py::arg("on_text") = py::none(),
           R"doc(The continuation of `prompt` (without the prompt): what `gguflow run --no-echo` prints.

n_predict: tokens at most (-1: until end of generation or a full context). Unset sampling
arguments take the graph's `sampler:` defaults; without a seed one is drawn. temperature=0 is
greedy. on_text(str) is called with each whole piece of text as it is generated. Each call
starts a fresh sequence.)doc")
      .def("embed", &embed, py::arg("texts"), py::arg("pooling") = py::none(),
           py::arg("normalize") = true,
           R"doc(float32 array [len(texts), dim]: one pooled vector per text, bit for bit what
`gguflow embed` writes. Texts are evaluated together in as few graph steps as fit (each attends
only to itself) and cut to the context. pooling: mean, sum, last, first or cls (default: the
model's). normalize: unit L2 length.)doc")
      .def("logits", &logits, py::arg("ids"),
           "float32 array [len(ids), vocab]: the logits after each id, one prefill of a fresh "
           "sequence (as `gguflow run --tokens IDS --dump-logits`).");

  m.def("kernels", &kernels, py::arg("kernels") = py::none(),
        "The kernel plugins found: dicts with name, target, path, usable, reason, selected.");
}
