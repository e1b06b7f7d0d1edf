// libFuzzer target: the tokenizers (runtime/tokenizer) on the real vocabularies in
// ../shared/data/vocab, one of each kind: SentencePiece (llama-spm), byte-level BPE with the
// gpt-2 and the qwen2 pre-tokenizers, WordPiece (bert-bge); and, to reach the other two BPE
// pre-tokenizers no shared vocabulary uses, the gpt-2 vocabulary rewritten (GgufWriter, into a
// scratch folder) with tokenizer.ggml.pre = llama-bpe and default. All loaded once.
//
// Input: byte 0 chooses the vocabulary (byte % 6, kVocabularies order), byte 1 the options
// (bits below); the rest is text (encoded, then the ids decoded back, whole and streamed) or,
// with kIdsInput set, a list of token ids (little-endian i32, reduced into -1..vocab size so
// out-of-range ids also occur) to decode. Invalid UTF-8 and out-of-range ids must end in
// gguflow::Error; decoding ids that encode produced must not throw at all, and byte-level BPE
// must give the text back exactly.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_support.h"
#include "ops/error.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/gguf/gguf_names.h"
#include "runtime/gguf/gguf_writer.h"
#include "runtime/tokenizer/detokenizer.h"
#include "runtime/tokenizer/tokenizer.h"

namespace {

using gguflow::Error;
using gguflow::TokenId;
using gguflow::Tokenizer;

struct Loaded {
  std::string name;
  std::shared_ptr<const gguflow::GgufFile> file;
  std::unique_ptr<Tokenizer> tokenizer;
};
std::vector<Loaded>* vocabularies = nullptr;

struct VocabSource {
  const char* file;  // under the shared data folder
  const char* pre;   // nullptr: as in the file; else tokenizer.ggml.pre is rewritten to this
};
constexpr VocabSource kVocabularies[] = {
    {"vocab/ggml-vocab-llama-spm.gguf", nullptr},  // 0 SentencePiece, byte fallback
    {"vocab/ggml-vocab-gpt-2.gguf", nullptr},      // 1 byte-level BPE, gpt-2 pre-tokenizer
    {"vocab/ggml-vocab-qwen2.gguf", nullptr},      // 2 byte-level BPE, qwen2, added tokens
    {"vocab/ggml-vocab-bert-bge.gguf", nullptr},   // 3 WordPiece
    {"vocab/ggml-vocab-gpt-2.gguf", "llama-bpe"},  // 4 BPE, llama-3 pre-tokenizer, ignore_merges
    {"vocab/ggml-vocab-gpt-2.gguf", "default"},    // 5 BPE, llama.cpp's default pre-tokenizer
};

// Byte 1 of the input.
enum : uint8_t {
  kAddSpecial = 0x01,       // EncodeOptions::add_special
  kParseSpecial = 0x02,     // EncodeOptions::parse_special
  kRenderSpecial = 0x04,    // DecodeOptions::render_special
  kAtSequenceStart = 0x08,  // DecodeOptions::at_sequence_start
  kIdsInput = 0x10,         // the rest is token ids, not text
};

std::string decode_streamed(const Tokenizer& tok, const std::vector<TokenId>& ids,
                            const gguflow::DecodeOptions& options) {
  gguflow::StreamingDetokenizer out(tok, options);
  std::string text;
  for (TokenId id : ids) text += out.push(id);
  return text + out.finish();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  vocabularies = new std::vector<Loaded>();
  for (const VocabSource& source : kVocabularies) {
    std::filesystem::path path = gguflow::fuzz::data_dir() / source.file;
    try {
      Loaded v;
      v.name = source.file;
      if (source.pre) {
        const auto original = gguflow::GgufFile::open(path.string());
        path = gguflow::fuzz::scratch_dir() / (std::string("vocab-pre-") + source.pre + ".gguf");
        gguflow::GgufWriter w(path.string());
        w.copy_metadata(*original, {gguflow::names::kTokenizerPre});
        w.set_string(gguflow::names::kTokenizerPre, source.pre);
        w.write_header();
        w.finish();
        v.name += std::string(" with pre ") + source.pre;
      }
      v.file = gguflow::GgufFile::open(path.string());
      v.tokenizer = std::make_unique<Tokenizer>(Tokenizer::from_gguf(*v.file));
      vocabularies->push_back(std::move(v));
    } catch (const Error& e) {
      gguflow::fuzz::fail_setup(std::string("cannot load ") + path.string() + ": " + e.what() +
                                " (set GGUFLOW_TEST_DATA to the shared/data folder)");
    }
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const Loaded& v = (*vocabularies)[data[0] % vocabularies->size()];
  const Tokenizer& tok = *v.tokenizer;
  const uint8_t flags = data[1];
  gguflow::EncodeOptions encode;
  encode.add_special = flags & kAddSpecial;
  encode.parse_special = flags & kParseSpecial;
  gguflow::DecodeOptions decode;
  decode.render_special = flags & kRenderSpecial;
  decode.at_sequence_start = flags & kAtSequenceStart;
  const bool ids_input = flags & kIdsInput;
  const std::string_view rest(reinterpret_cast<const char*>(data + 2), size - 2);

  if (ids_input) {
    // Arbitrary ids: out-of-range ones must be refused cleanly, the rest decoded.
    std::vector<TokenId> ids;
    const int64_t n_vocab = static_cast<int64_t>(tok.vocab_size());
    for (size_t i = 0; i + 4 <= rest.size(); i += 4) {
      uint32_t raw = 0;
      std::memcpy(&raw, rest.data() + i, 4);
      ids.push_back(static_cast<TokenId>(static_cast<int64_t>(raw % (n_vocab + 2)) - 1));
    }
    try {
      (void)tok.decode(ids, decode);
    } catch (const Error&) {
    }
    try {
      (void)decode_streamed(tok, ids, decode);
    } catch (const Error&) {
    }
    return 0;
  }

  std::vector<TokenId> ids;
  try {
    ids = tok.encode(rest, encode);
  } catch (const Error& e) {
    gguflow::fuzz::note_clean_error(e);
    return 0;  // invalid UTF-8, named with its byte offset
  }
  // From here on the ids came from encode(): an exception is a finding (not caught).
  for (TokenId id : ids) tok.check_id(id);
  const std::string whole = tok.decode(ids, decode);
  const std::string streamed = decode_streamed(tok, ids, decode);
  GGUFLOW_FUZZ_EXPECT(whole == streamed, v.name + ": streamed and whole decoding differ");
  if (tok.vocab().kind() == gguflow::VocabKind::kBytePairEncoding && !encode.add_special &&
      !encode.parse_special) {
    // Byte-level BPE is lossless: every byte of the text has a token and decoding maps back.
    GGUFLOW_FUZZ_EXPECT(whole == rest, v.name + ": byte-level BPE did not give the text back");
  }
  return 0;
}
