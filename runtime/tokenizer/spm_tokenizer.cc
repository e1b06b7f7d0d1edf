#include "runtime/tokenizer/spm_tokenizer.h"

#include <queue>
#include <string>

#include "runtime/tokenizer/unicode.h"

namespace gguflow {
namespace {

// A piece of the text in a doubly linked list; merged-away pieces keep length 0.
struct Symbol {
  int prev, next;      // indices into the symbol list, -1 at the ends
  const char* text;    // into the input
  size_t length;       // bytes
};

struct Bigram {
  int left, right;  // symbol indices
  float score;      // the merged token's score
  size_t length;    // bytes of the merged text when it was queued (stale entries differ)
};

// Highest score first; equal scores: the leftmost pair first.
struct BigramOrder {
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

class SpmSession {
 public:
  SpmSession(const Vocabulary& vocab, std::vector<TokenId>& out) : vocab_(vocab), out_(out) {}

  void encode(std::string_view text) {
    for (size_t offset = 0; offset < text.size();) {
      const size_t n = std::min(unicode::utf8_sequence_length(static_cast<uint8_t>(text[offset])),
                                text.size() - offset);
      const int index = static_cast<int>(symbols_.size());
      offset += n;
      symbols_.push_back(Symbol{index - 1, offset == text.size() ? -1 : index + 1,
                                text.data() + offset - n, n});
    }
    for (int i = 1; i < static_cast<int>(symbols_.size()); ++i) try_add_bigram(i - 1, i);

    while (!queue_.empty()) {
      const Bigram bigram = queue_.top();
      queue_.pop();
      Symbol& left = symbols_[bigram.left];
      Symbol& right = symbols_[bigram.right];
      if (left.length == 0 || right.length == 0 || left.length + right.length != bigram.length)
        continue;  // one side was merged into something else since this pair was queued
      left.length += right.length;
      right.length = 0;
      left.next = right.next;
      if (right.next >= 0) symbols_[right.next].prev = bigram.left;
      try_add_bigram(left.prev, bigram.left);
      try_add_bigram(bigram.left, left.next);
    }
    for (int i = symbols_.empty() ? -1 : 0; i != -1; i = symbols_[i].next)
      resegment(symbols_[i]);
  }

 private:
  void try_add_bigram(int left, int right) {
    if (left == -1 || right == -1) return;
    std::string text(symbols_[left].text, symbols_[left].length + symbols_[right].length);
    const TokenId id = vocab_.find(text);
    if (id == kNoToken) return;
    queue_.push(Bigram{left, right, vocab_.score(id), text.size()});
  }

  // Emits a final piece: its token, or else its bytes. (Only pairs whose text is a token are
  // ever merged, so a piece that is not a token is a single character outside the vocabulary.)
  void resegment(const Symbol& symbol) {
    const std::string text(symbol.text, symbol.length);
    const TokenId id = vocab_.find(text);
    if (id != kNoToken) {
      out_.push_back(id);
      return;
    }
    for (char c : text) {
      const TokenId byte = vocab_.byte_token(static_cast<uint8_t>(c));
      if (byte != kNoToken) {
        out_.push_back(byte);
      } else if (vocab_.unknown() != kNoToken) {
        out_.push_back(vocab_.unknown());
      }
    }
  }

  const Vocabulary& vocab_;
  std::vector<TokenId>& out_;
  std::vector<Symbol> symbols_;
  std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> queue_;
};

}  // namespace

void spm_encode(const Vocabulary& vocab, std::string_view text, std::vector<TokenId>& out) {
  SpmSession(vocab, out).encode(text);
}

}  // namespace gguflow
