#include "runtime/runner/chat_conversation.h"

#include <utility>

#include "ops/error.h"

namespace gguflow::runner {

ChatConversation::ChatConversation(ChatTemplate chat_template, std::string system)
    : template_(chat_template) {
  if (!system.empty()) messages_.push_back({"system", std::move(system)});
}

ChatTurn ChatConversation::user_turn(const std::string& message) {
  if (!messages_.empty() && messages_.back().role == "user")
    throw error("chat: expected an assistant reply before the next user message");
  messages_.push_back({"user", message});
  const std::string full = template_.apply(messages_, /*add_generation_prompt=*/true);
  ChatTurn turn;
  if (full.size() >= consumed_.size() && full.compare(0, consumed_.size(), consumed_) == 0) {
    turn.text = full.substr(consumed_.size());
  } else {
    turn.text = full;
    turn.restart = true;
  }
  consumed_ = full;
  return turn;
}

void ChatConversation::assistant_reply(const std::string& reply) {
  if (messages_.empty() || messages_.back().role != "user")
    throw error("chat: expected a user message before the assistant's reply");
  messages_.push_back({"assistant", reply});
  consumed_ += reply;
}

}  // namespace gguflow::runner
