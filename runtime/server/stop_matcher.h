// Stop strings over streamed text: text is passed on as soon as it cannot be the start of a stop
// string, so a client never receives part of one. When a stop string appears, generation ends
// and the text before it is the last that is passed on (the stop string itself is not).
//
//   StopMatcher m({"\n\n", "END"});
//   std::string out = m.push("Hello\n");   // "Hello" ("\n" is held: it may begin "\n\n")
//   out = m.push("\n");                     // "" and m.stopped()
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gguflow::server {

class StopMatcher {
 public:
  explicit StopMatcher(std::vector<std::string> stops) : stops_(std::move(stops)) {}

  // Appends generated text; returns what may be sent now. After a match, returns the text
  // before the stop string and stopped() is true; later calls return "".
  std::string push(std::string_view text);
  // The held-back text, at the end of generation (no stop string came).
  std::string flush();
  bool stopped() const { return stopped_; }

 private:
  std::vector<std::string> stops_;
  std::string held_;  // a suffix of the text so far that begins some stop string
  bool stopped_ = false;
};

}  // namespace gguflow::server
