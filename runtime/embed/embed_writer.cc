#include "runtime/embed/embed_writer.h"


#include <bit>
#include <cerrno>
#include <charconv>
#include <cstring>

#include "ops/error.h"

namespace gguflow::embed {
namespace {

void write_whole(FILE* out, const std::string& name, const std::string& bytes) {
  if (std::fwrite(bytes.data(), 1, bytes.size(), out) != bytes.size())
    throw error(name, ": write failed: ", std::strerror(errno));
}

class JsonlWriter final : public EmbeddingWriter {
 public:
  JsonlWriter(FILE* out, std::string name, int64_t dim, bool per_token)
      : out_(out), name_(std::move(name)), dim_(dim), per_token_(per_token) {}

  void write(int64_t index, const float* rows, int64_t n_rows) override {
    record_.clear();
    record_ += "{\"index\": " + std::to_string(index);
    if (per_token_) record_ += ", \"tokens\": " + std::to_string(n_rows);
    record_ += ", \"embedding\": ";
    if (per_token_) record_ += '[';
    for (int64_t r = 0; r < n_rows; ++r) {
      if (r) record_ += ", ";
      record_ += '[';
      for (int64_t i = 0; i < dim_; ++i) {
        if (i) record_ += ", ";
        append_float(&record_, rows[r * dim_ + i]);
      }
      record_ += ']';
    }
    if (per_token_) record_ += ']';
    record_ += "}\n";
    write_whole(out_, name_, record_);
  }
  void finish() override {
    if (std::fflush(out_) != 0) throw error(name_, ": write failed: ", std::strerror(errno));
  }

 private:
  FILE* out_;
  std::string name_;
  int64_t dim_;
  bool per_token_;
  std::string record_;  // reused: one record's text
};

class TsvWriter final : public EmbeddingWriter {
 public:
  TsvWriter(FILE* out, std::string name, int64_t dim, bool per_token)
      : out_(out), name_(std::move(name)), dim_(dim), per_token_(per_token) {}

  void write(int64_t index, const float* rows, int64_t n_rows) override {
    record_.clear();
    for (int64_t r = 0; r < n_rows; ++r) {
      record_ += std::to_string(index);
      if (per_token_) record_ += '\t' + std::to_string(r);
      for (int64_t i = 0; i < dim_; ++i) {
        record_ += '\t';
        append_float(&record_, rows[r * dim_ + i]);
      }
      record_ += '\n';
    }
    write_whole(out_, name_, record_);
  }
  void finish() override {
    if (std::fflush(out_) != 0) throw error(name_, ": write failed: ", std::strerror(errno));
  }

 private:
  FILE* out_;
  std::string name_;
  int64_t dim_;
  bool per_token_;
  std::string record_;
};

class NpyWriter final : public EmbeddingWriter {
 public:
  NpyWriter(FILE* out, std::string name, int64_t n_texts, int64_t dim)
      : out_(out), name_(std::move(name)), n_texts_(n_texts), dim_(dim) {
    static_assert(std::endian::native == std::endian::little, "npy output assumes little-endian");
    write_whole(out_, name_, npy_header_f32(n_texts, dim));
  }

  void write(int64_t /*index*/, const float* rows, int64_t n_rows) override {
    GGUFLOW_CHECK(n_rows == 1 && written_ < n_texts_);
    const size_t bytes = sizeof(float) * static_cast<size_t>(dim_);
    if (std::fwrite(rows, 1, bytes, out_) != bytes)
      throw error(name_, ": write failed: ", std::strerror(errno));
    ++written_;
  }
  void finish() override {
    GGUFLOW_CHECK(written_ == n_texts_);
    if (std::fflush(out_) != 0) throw error(name_, ": write failed: ", std::strerror(errno));
  }

 private:
  FILE* out_;
  std::string name_;
  int64_t n_texts_, dim_;
  int64_t written_ = 0;
};

}  // namespace

OutputFormat parse_output_format(std::string_view name) {
  if (name == "jsonl") return OutputFormat::kJsonl;
  if (name == "tsv") return OutputFormat::kTsv;
  if (name == "npy") return OutputFormat::kNpy;
  throw error("--format: expected jsonl, tsv or npy, found '", name, "'");
}

void append_float(std::string* out, float v) {
  char buf[32];
  const auto result = std::to_chars(buf, buf + sizeof buf, v);
  GGUFLOW_CHECK(result.ec == std::errc());
  out->append(buf, result.ptr);
}

std::string npy_header_f32(int64_t rows, int64_t cols) {
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(rows) +
                     ", " + std::to_string(cols) + "), }";
  // magic (6) + version (2) + header length (2) + dict + padding + '\n' is a multiple of 64,
  // as NumPy writes it, so the float data starts aligned.
  const size_t unpadded = 10 + dict.size() + 1;
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict += '\n';
  std::string header("\x93NUMPY\x01\x00", 8);
  header += static_cast<char>(dict.size() & 0xFF);
  header += static_cast<char>((dict.size() >> 8) & 0xFF);
  return header + dict;
}

std::unique_ptr<EmbeddingWriter> make_embedding_writer(OutputFormat format, FILE* out,
                                                       std::string name, int64_t n_texts,
                                                       int64_t dim, bool per_token) {
  switch (format) {
    case OutputFormat::kJsonl: return std::make_unique<JsonlWriter>(out, std::move(name), dim, per_token);
    case OutputFormat::kTsv: return std::make_unique<TsvWriter>(out, std::move(name), dim, per_token);
    case OutputFormat::kNpy:
      if (per_token)
        throw error("--format npy: expected one vector per text, found --pooling none (a varying "
                    "number of rows per text); use --format jsonl or tsv");
      if (isatty(fileno(out)))
        throw error("--format npy: expected -o FILE or a redirected stdout, found a terminal");
      return std::make_unique<NpyWriter>(out, std::move(name), n_texts, dim);
  }
  GGUFLOW_CHECK(false);
  return nullptr;
}

}  // namespace gguflow::embed
