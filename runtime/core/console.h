// The output rules of docs/CLI.md that span the two standard streams: generated text goes to
// stdout, everything else to stderr, and a stderr line always starts on a fresh line, also when
// both streams go to one file or pipe (`gguflow run ... 2>&1 | cat` glued the timing line to the
// last word). Whoever writes text to stdout without ending the line reports it here; whoever
// starts a notice on stderr asks for a fresh line first.
#pragma once

#include <cstdio>
#include <string_view>

namespace gguflow::console {

// `stream` is a terminal (progress bars and in-place redraws only then).
bool is_terminal(FILE* stream);

// Text was just written to stdout: remembers whether its last byte ended the line.
void wrote_to_stdout(std::string_view text);

// Before a notice on stderr: when stdout's last byte did not end a line and stdout and stderr
// are the same file, pipe or terminal, ends that line (on stderr, after flushing stdout, so the
// bytes land in order). A stdout redirected elsewhere keeps its exact text.
void start_stderr_line();

// Removes one trailing line break ("\n" or "\r\n") from text read from a file or stdin.
std::string_view without_final_newline(std::string_view text);

}  // namespace gguflow::console
