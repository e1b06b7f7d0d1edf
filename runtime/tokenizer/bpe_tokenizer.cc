#include "runtime/tokenizer/bpe_tokenizer.h"

#include <queue>
#include <string>

#include "runtime/tokenizer/bpe_pretokenizer.h"
#include "runtime/tokenizer/byte_level.h"
#include "runtime/tokenizer/unicode.h"

namespace gguflow {
namespace {

// A piece of the word in a doubly linked list; merged-away pieces keep length 0.
struct Symbol {
  int prev, next;   // indices, -1 at the ends
  size_t offset;    // bytes into the (byte-level encoded) word
  size_t length;    // bytes
};

struct Bigram {
  int left, right;
  int rank;
  std::string text;  // left + right when queued; a stale entry no longer matches
};

// Lowest rank first; equal ranks: the leftmost pair first.
struct BigramOrder {
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  }
};

class BpeWord {
 public:
  BpeWord(const Vocabulary& vocab, std::string word) : vocab_(vocab), word_(std::move(word)) {}

  void encode(std::vector<TokenId>& out) {
    if (vocab_.ignore_merges() && vocab_.find(word_) != kNoToken) {
      out.push_back(vocab_.find(word_));
      return;
    }
    for (size_t offset = 0; offset < word_.size();) {
      const size_t n = std::min(unicode::utf8_sequence_length(static_cast<uint8_t>(word_[offset])),
                                word_.size() - offset);
      const int index = static_cast<int>(symbols_.size());
      symbols_.push_back(Symbol{index - 1, offset + n == word_.size() ? -1 : index + 1, offset, n});
      offset += n;
    }
    for (int i = 1; i < static_cast<int>(symbols_.size()); ++i) add_bigram(i - 1, i);

    while (!queue_.empty()) {
      const Bigram bigram = queue_.top();
      queue_.pop();
      Symbol& left = symbols_[bigram.left];
      Symbol& right = symbols_[bigram.right];
      if (left.length == 0 || right.length == 0 || text(left) + text(right) != bigram.text)
        continue;
      left.length += right.length;
      right.length = 0;
      left.next = right.next;
      if (right.next >= 0) symbols_[right.next].prev = bigram.left;
      add_bigram(left.prev, bigram.left);
      add_bigram(bigram.left, left.next);
    }

    for (int i = symbols_.empty() ? -1 : 0; i != -1; i = symbols_[i].next) {
      const std::string piece = text(symbols_[i]);
      const TokenId id = vocab_.find(piece);
      if (id != kNoToken) {
        out.push_back(id);
        continue;
      }
      // Not a token (a vocabulary without every byte character): as llama.cpp, emit the
      // single-byte tokens that exist.
      for (char c : piece) {
        const TokenId byte = vocab_.find(std::string(1, c));
        if (byte != kNoToken) out.push_back(byte);
      }
    }
  }

 private:
  std::string text(const Symbol& s) const { return word_.substr(s.offset, s.length); }

  void add_bigram(int left, int right) {
    if (left == -1 || right == -1) return;
    std::string left_text = text(symbols_[left]);
    std::string right_text = text(symbols_[right]);
    const int rank = vocab_.merge_rank(left_text, right_text);
    if (rank < 0) return;
    queue_.push(Bigram{left, right, rank, left_text + right_text});
  }

  const Vocabulary& vocab_;
  std::string word_;  // byte-level encoded
  std::vector<Symbol> symbols_;
  std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> queue_;
};

}  // namespace

void bpe_encode(const Vocabulary& vocab, std::string_view text, std::vector<TokenId>& out) {
  for (std::string_view word : pretokenize(vocab.pre_tokenizer(), text))
    BpeWord(vocab, byte_level::encode(word)).encode(out);
}

}  // namespace gguflow
