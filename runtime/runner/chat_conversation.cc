#include "runtime/runner/chat_conversation.h"

#include <algorithm>
#include <utility>

#include "ops/error.h"
#include "runtime/core/utf8.h"

namespace gguflow::runner {

ChatConversation::ChatConversation(ChatTemplate chat_template, std::string system)
    : template_(chat_template) {
  utf8::require_valid(system, "--system");
  if (!system.empty()) messages_.push_back({"system", std::move(system)});
}

ChatTurn ChatConversation::user_turn(const std::string& message) {
  if (!messages_.empty() && messages_.back().role == "user")
    throw error("chat: expected an assistant reply before the next user message");
  utf8::require_valid(message, "chat message");
  messages_.push_back({"user", message});
  RenderedChat full = template_.render(messages_, /*add_generation_prompt=*/true);
  ChatTurn turn;
  size_t skipped = 0;  // bytes of `full` already in the cache
  if (full.text.size() >= consumed_.size() && full.text.compare(0, consumed_.size(), consumed_) == 0) {
    skipped = consumed_.size();
    turn.text = full.text.substr(skipped);
  } else {
    turn.text = full.text;
    turn.restart = true;
  }
  for (const auto& [begin, end] : full.content)
    if (end > skipped) turn.content.emplace_back(std::max(begin, skipped) - skipped, end - skipped);
  consumed_ = std::move(full.text);
  return turn;
}

void ChatConversation::assistant_reply(const std::string& reply) {
  if (messages_.empty() || messages_.back().role != "user")
    throw error("chat: expected a user message before the assistant's reply");
  messages_.push_back({"assistant", reply});
  consumed_ += reply;
}

}  // namespace gguflow::runner
