// Malformed GGUF input: each case produces its own specific error, never a crash (this suite
// also runs under ASan/UBSan).
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "ops/error.h"
#include "runtime/gguf/gguf_file.h"
#include "tests/gguf/gguf_bytes_builder.h"
#include "tests/support/test_data.h"

namespace gguflow {
namespace {

using test::GgufBytesBuilder;

// Parses `bytes` and returns the error message ("" when it parsed).
std::string parse_error(std::vector<uint8_t> bytes) {
  try {
    GgufFile::parse("test.gguf", std::move(bytes));
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

#define EXPECT_ERROR_CONTAINS(bytes, text)                               \
  do {                                                                   \
    std::string message = parse_error(bytes);                            \
    EXPECT_NE(message.find(text), std::string::npos)                     \
        << "message: '" << message << "'\nexpected to contain: " << text; \
    EXPECT_NE(message.find("test.gguf"), std::string::npos) << message;  \
  } while (0)

// A valid file: one metadata key and one 32x2 F32 tensor.
GgufBytesBuilder valid_file() {
  GgufBytesBuilder b;
  b.header(1, 1).kv_string("general.architecture", "llama");
  b.tensor_info("w", {32, 2}, GGML_TYPE_F32, 0).pad_to(32).zeros(32 * 2 * 4);
  return b;
}

TEST(GgufMalformed, ValidBaseParses) { EXPECT_EQ(parse_error(valid_file().bytes), ""); }

TEST(GgufMalformed, BadMagic) {
  auto b = valid_file();
  b.bytes[0] = 'X';
  EXPECT_ERROR_CONTAINS(b.bytes, "byte 0: expected the magic \"GGUF\", found \"XGUF\"");
}

TEST(GgufMalformed, UnsupportedVersion) {
  auto b = valid_file();
  b.bytes[4] = 4;
  EXPECT_ERROR_CONTAINS(b.bytes, "expected GGUF version 1, 2 or 3, found 4");
}

TEST(GgufMalformed, EmptyFile) { EXPECT_ERROR_CONTAINS({}, "file truncated"); }

TEST(GgufMalformed, EveryPrefixOfARealHeaderIsTruncated) {
  GGUFLOW_REQUIRE_DATA("models/stories260K.gguf");
  auto file = GgufFile::open(test::data_path("models/stories260K.gguf").string());
  std::ifstream in(test::data_path("models/stories260K.gguf"), std::ios::binary);
  std::vector<uint8_t> all((std::istreambuf_iterator<char>(in)), {});
  // Every prefix shorter than the end of the tensor table must fail with a truncation error
  // (or, once the header is complete, with tensor data past the end of the file).
  size_t header_end = file->data_offset();
  ASSERT_GT(header_end, 1000u);
  for (size_t n = 0; n < header_end; ++n) {
    std::string m = parse_error(std::vector<uint8_t>(all.begin(), all.begin() + n));
    ASSERT_TRUE(m.find("truncated") != std::string::npos ||
                m.find("past the end") != std::string::npos ||
                m.find("cannot fit") != std::string::npos)
        << "prefix of " << n << " bytes: '" << m << "'";
  }
}

TEST(GgufMalformed, StringLengthPastEof) {
  GgufBytesBuilder b;
  b.header(0, 1).count(1000).raw<uint32_t>(0).zeros(16);
  EXPECT_ERROR_CONTAINS(b.bytes, "metadata key has length 1000, which runs past the end");
}

TEST(GgufMalformed, AbsurdTensorCount) {
  GgufBytesBuilder b;
  b.header(uint64_t{1} << 60, 0);
  EXPECT_ERROR_CONTAINS(b.bytes, "tensor count 1152921504606846976 cannot fit");
}

TEST(GgufMalformed, AbsurdMetadataCount) {
  GgufBytesBuilder b;
  b.header(0, uint64_t{1} << 50);
  EXPECT_ERROR_CONTAINS(b.bytes, "metadata count 1125899906842624 cannot fit");
}

TEST(GgufMalformed, AbsurdArrayLength) {
  GgufBytesBuilder b;
  b.header(0, 1).string("a").raw<uint32_t>(9).raw<uint32_t>(4).count(uint64_t{1} << 40);
  EXPECT_ERROR_CONTAINS(b.bytes, "array of 1099511627776 u32 cannot fit");
}

TEST(GgufMalformed, UnknownValueType) {
  GgufBytesBuilder b;
  b.header(0, 1).string("key").raw<uint32_t>(13).raw<uint32_t>(0);
  EXPECT_ERROR_CONTAINS(b.bytes, "metadata 'key': expected a value type 0..12, found 13");
}

TEST(GgufMalformed, DuplicateKey) {
  GgufBytesBuilder b;
  b.header(0, 2).kv_u32("k", 1).kv_u32("k", 2);
  EXPECT_ERROR_CONTAINS(b.bytes, "duplicate metadata key 'k'");
}

TEST(GgufMalformed, DeeplyNestedArrays) {
  GgufBytesBuilder b;
  b.header(0, 1).string("deep").raw<uint32_t>(9);
  for (int i = 0; i < 20; ++i) b.raw<uint32_t>(9).count(1);
  EXPECT_ERROR_CONTAINS(b.bytes, "arrays nested deeper than 8");
}

TEST(GgufMalformed, TooManyDims) {
  GgufBytesBuilder b;
  b.header(1, 0).tensor_info("t", {32, 1, 1, 1, 1}, GGML_TYPE_F32, 0);
  EXPECT_ERROR_CONTAINS(b.bytes, "tensor 't': expected 1 to 4 dimensions, found 5");
}

TEST(GgufMalformed, ZeroDim) {
  GgufBytesBuilder b;
  b.header(1, 0).tensor_info("t", {32, 0}, GGML_TYPE_F32, 0);
  EXPECT_ERROR_CONTAINS(b.bytes, "tensor 't': dimension 1 is zero");
}

TEST(GgufMalformed, OverflowingDims) {
  GgufBytesBuilder b;
  b.header(1, 0).tensor_info("t", {uint64_t{1} << 40, uint64_t{1} << 40}, GGML_TYPE_F32, 0);
  EXPECT_ERROR_CONTAINS(b.bytes, "tensor 't': dimensions overflow");
}

TEST(GgufMalformed, UnknownTypeId) {
  GgufBytesBuilder b;
  b.header(1, 0).tensor_info("t", {32}, 200, 0);
  EXPECT_ERROR_CONTAINS(b.bytes, "tensor 't': unknown GGML type id 200");
}

TEST(GgufMalformed, TensorDataPastEof) {
  GgufBytesBuilder b;
  b.header(1, 0).tensor_info("t", {32, 4}, GGML_TYPE_F32, 0).pad_to(32).zeros(100);
  EXPECT_ERROR_CONTAINS(b.bytes, "tensor 't': data [");
  EXPECT_ERROR_CONTAINS(b.bytes, "lies past the end of the file");
}

TEST(GgufMalformed, MisalignedOffset) {
  GgufBytesBuilder b;
  b.header(1, 0).tensor_info("t", {32}, GGML_TYPE_F32, 4).pad_to(32).zeros(256);
  EXPECT_ERROR_CONTAINS(b.bytes, "tensor 't': data offset 4 is not a multiple of the alignment 32");
}

TEST(GgufMalformed, BadAlignmentKey) {
  GgufBytesBuilder b;
  b.header(0, 1).kv_u32("general.alignment", 24);
  EXPECT_ERROR_CONTAINS(b.bytes, "'general.alignment': expected a positive power of two, found 24");
}

TEST(GgufMalformed, DuplicateTensorName) {
  GgufBytesBuilder b;
  b.header(2, 0).tensor_info("t", {32}, GGML_TYPE_F32, 0).tensor_info("t", {32}, GGML_TYPE_F32, 128);
  b.pad_to(32).zeros(256);
  EXPECT_ERROR_CONTAINS(b.bytes, "duplicate tensor name 't'");
}

TEST(GgufMalformed, RowNotMultipleOfBlockSize) {
  GgufBytesBuilder b;
  b.header(1, 0).tensor_info("t", {40, 2}, GGML_TYPE_Q8_0, 0).pad_to(32).zeros(256);
  EXPECT_ERROR_CONTAINS(b.bytes, "tensor 't': row length 40 is not a multiple of the Q8_0 block size 32");
}

TEST(GgufMalformed, BoolOutOfRange) {
  GgufBytesBuilder b;
  b.header(0, 1).string("flag").raw<uint32_t>(7).raw<uint8_t>(2);
  EXPECT_ERROR_CONTAINS(b.bytes, "expected a bool (0 or 1), found 2");
}

TEST(GgufReaderValues, EveryValueTypeAndNestedArrays) {
  GgufBytesBuilder b;
  b.header(0, 14);
  b.string("u8").raw<uint32_t>(0).raw<uint8_t>(200);
  b.string("i8").raw<uint32_t>(1).raw<int8_t>(-5);
  b.string("u16").raw<uint32_t>(2).raw<uint16_t>(60000);
  b.string("i16").raw<uint32_t>(3).raw<int16_t>(-30000);
  b.string("u32").raw<uint32_t>(4).raw<uint32_t>(4000000000u);
  b.string("i32").raw<uint32_t>(5).raw<int32_t>(-2000000000);
  b.string("f32").raw<uint32_t>(6).raw<float>(0.5f);
  b.string("bool").raw<uint32_t>(7).raw<uint8_t>(1);
  b.string("str").raw<uint32_t>(8).string("héllo");
  b.string("u64").raw<uint32_t>(10).raw<uint64_t>(uint64_t{1} << 40);
  b.string("i64").raw<uint32_t>(11).raw<int64_t>(-(int64_t{1} << 40));
  b.string("f64").raw<uint32_t>(12).raw<double>(1e-6);
  b.string("strings").raw<uint32_t>(9).raw<uint32_t>(8).count(2).string("a").string("bc");
  // [[1, 2], [3]] as an array of arrays of i32
  b.string("nested").raw<uint32_t>(9).raw<uint32_t>(9).count(2);
  b.raw<uint32_t>(5).count(2).raw<int32_t>(1).raw<int32_t>(2);
  b.raw<uint32_t>(5).count(1).raw<int32_t>(3);
  auto f = GgufFile::parse("values.gguf", b.bytes);
  EXPECT_EQ(f->get("u8").as_int(), 200);
  EXPECT_EQ(f->get("i8").as_int(), -5);
  EXPECT_EQ(f->get("u16").as_int(), 60000);
  EXPECT_EQ(f->get("i16").as_int(), -30000);
  EXPECT_EQ(f->get("u32").as_int(), 4000000000LL);
  EXPECT_EQ(f->get("i32").as_int(), -2000000000LL);
  EXPECT_EQ(f->get("f32").as_double(), 0.5);
  EXPECT_TRUE(f->get("bool").as_bool());
  EXPECT_EQ(f->get("str").as_string(), "héllo");
  EXPECT_EQ(f->get("u64").as_int(), int64_t{1} << 40);
  EXPECT_EQ(f->get("i64").as_int(), -(int64_t{1} << 40));
  EXPECT_EQ(f->get("f64").as_double(), 1e-6);
  auto strings = f->get("strings").as_string_array();
  ASSERT_EQ(strings.size(), 2u);
  EXPECT_EQ(strings[1], "bc");
  const auto& nested = f->get("nested").as_array();
  ASSERT_EQ(nested.size(), 2u);
  EXPECT_EQ(nested[0].as_int_array(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(nested[1].as_int_array(), (std::vector<int64_t>{3}));
  EXPECT_THROW(f->get("str").as_int("str"), Error);
  EXPECT_THROW(f->get("missing"), Error);
}

TEST(GgufReaderValues, TypeOfUnknownSizeIsReportedWhenUsed) {
  GgufBytesBuilder b;
  b.header(1, 0).tensor_info("old", {32}, 4 /* Q4_2, removed from GGML */, 0).pad_to(32);
  auto f = GgufFile::parse("old.gguf", b.bytes);  // opening is fine
  try {
    f->tensor_bytes(f->tensor("old"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tensor 'old' has type Q4_2"), std::string::npos) << e.what();
  }
}

TEST(GgufReaderValues, ZeroTensorsIsValidAndV1CountsAreU32) {
  GgufBytesBuilder b(1);
  b.header(0, 1).kv_string("tokenizer.ggml.model", "llama");
  auto f = GgufFile::parse("v1.gguf", b.bytes);
  EXPECT_EQ(f->version(), 1u);
  EXPECT_TRUE(f->tensors().empty());
  EXPECT_EQ(f->get("tokenizer.ggml.model").as_string(), "llama");
}

// Hardening (issue 23): sizes that wrap modulo 2^64, tensors sharing bytes, a FIFO as the path.

TEST(GgufHardening, ShippedByteSizeWrapIsRefusedNamingTheTensor) {
  GGUFLOW_REQUIRE_DATA("malformed/tiny_bytes_wrap.gguf");
  const std::string path = test::data_path("malformed/tiny_bytes_wrap.gguf").string();
  try {
    GgufFile::open(path);
    FAIL() << "a tensor of 2^64 bytes (wrapped to 0) was accepted";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(path), std::string::npos) << m;
    EXPECT_NE(m.find("tensor 't'"), std::string::npos) << m;
    EXPECT_NE(m.find("overflows 64 bits"), std::string::npos) << m;
  }
}

TEST(GgufHardening, BuiltByteSizeWrapIsRefused) {
  // F32 [4, 2^60]: 2^62 elements (allowed), 2^64 bytes (wraps to 0 without checks).
  GgufBytesBuilder b;
  b.header(1, 0).tensor_info("t", {4, uint64_t{1} << 60}, GGML_TYPE_F32, 0).pad_to(32);
  EXPECT_ERROR_CONTAINS(b.bytes, "tensor 't' (F32, dims [4, 1152921504606846976]): its size in bytes overflows 64 bits");
}

TEST(GgufHardening, OffsetPlusSizeWrapIsRefused) {
  // An offset near 2^64: offset + bytes wraps to a small number without checks.
  GgufBytesBuilder b;
  b.header(1, 0).tensor_info("t", {8}, GGML_TYPE_F32, ~uint64_t{31}).pad_to(32).zeros(32);
  EXPECT_ERROR_CONTAINS(b.bytes, "tensor 't' (F32, dims [8]): data of 32 bytes at offset");
  EXPECT_ERROR_CONTAINS(b.bytes, "lies past the end of the file");
}

TEST(GgufHardening, OverlappingTensorDataIsRefused) {
  GgufBytesBuilder b;
  b.header(2, 0)
      .tensor_info("a", {32, 2}, GGML_TYPE_F32, 0)
      .tensor_info("b", {32}, GGML_TYPE_F32, 128)  // inside a's [0, 256)
      .pad_to(32)
      .zeros(32 * 3 * 4);
  EXPECT_ERROR_CONTAINS(b.bytes, "tensors 'a'");
  EXPECT_ERROR_CONTAINS(b.bytes, "and 'b'");
  EXPECT_ERROR_CONTAINS(b.bytes, "overlap");
  // Adjacent tensors are fine.
  GgufBytesBuilder ok;
  ok.header(2, 0)
      .tensor_info("a", {32, 2}, GGML_TYPE_F32, 0)
      .tensor_info("b", {32}, GGML_TYPE_F32, 256)
      .pad_to(32)
      .zeros(32 * 3 * 4);
  EXPECT_EQ(parse_error(ok.bytes), "");
}

TEST(GgufHardening, FifoIsRefusedWithoutBlocking) {
  const auto fifo = test::temp_dir() / "model.gguf";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Before the fix open() blocked forever waiting for a writer; the test would time out.
  try {
    GgufFile::open(fifo.string());
    FAIL() << "a FIFO was opened";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a regular file (a FIFO)"), std::string::npos) << e.what();
  }
}

// Accessor errors on parsed values name the file (they said only "tokenizer.ggml.tokens: ...").
TEST(GgufHardening, ValueErrorsNameTheFile) {
  GgufBytesBuilder b;
  b.header(0, 2).string("tokenizer.ggml.tokens").raw<uint32_t>(9).raw<uint32_t>(4).count(1).raw<uint32_t>(7);
  b.kv_u32("n", 5);
  auto f = GgufFile::parse("vocab.gguf", b.bytes);
  try {
    f->get("tokenizer.ggml.tokens").as_string_array("tokenizer.ggml.tokens");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "vocab.gguf: metadata 'tokenizer.ggml.tokens': expected an array of strings, found an array of u32");
  }
  try {
    f->get("n").as_string("n");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "vocab.gguf: metadata 'n': expected a string, found u32");
  }
  // A caller that already names the file is not prefixed twice.
  try {
    f->get("n").as_string("vocab.gguf: metadata 'n'");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "vocab.gguf: metadata 'n': expected a string, found u32");
  }
}

TEST(GgufHardening, HugeAlignmentNamesTheFile) {
  GgufBytesBuilder b;
  b.header(0, 1).string("general.alignment").raw<uint32_t>(10).raw<uint64_t>(~uint64_t{0});
  EXPECT_ERROR_CONTAINS(b.bytes, "test.gguf: metadata 'general.alignment': integer 18446744073709551615 is too large");
}

}  // namespace
}  // namespace gguflow
