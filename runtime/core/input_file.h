// Reading a whole input file (a graph, a prompt, a text) as bytes, with the checks every reader
// needs: the path must be a regular file (a directory made std::ifstream throw
// "basic_filebuf::underflow ..." out of the command; a FIFO would block), and a read error is a
// gguflow::Error naming the file and `what` it is.
#pragma once

#include <cstdio>
#include <string>

namespace gguflow {

// The bytes of `path`. Throws gguflow::Error "PATH: cannot read the WHAT: REASON" when it does
// not exist, is not a regular file, or cannot be read.
std::string read_input_file(const std::string& path, const char* what);

// Everything left on `in` (stdin for a '-' argument), as bytes. Throws gguflow::Error
// "<stdin>: cannot read: REASON" when reading fails.
std::string read_stream(FILE* in);

}  // namespace gguflow
