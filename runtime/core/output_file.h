// An output file that is never seen half-written: used by every command that writes a result
// file (embed, lower, ...).
#pragma once

#include <cstdio>
#include <string>

namespace gguflow {

// An output file written under a temporary name in the same folder and renamed over `path` by
// commit(), so a reader never sees a partial file; destroyed uncommitted, it removes the
// temporary. path "-" or "" means stdout (no temporary). A process killed by SIGTERM, SIGINT or
// SIGHUP while OutputFiles are open removes their temporaries before dying of the signal
// (unless the program installed its own handler for that signal).
//
// As the shell's `>` would: a symbolic link's target is replaced (not the link), a device or
// FIFO is written in place, a file the user may not write is refused, and a replaced file
// keeps its permissions. A path naming one of the command's inputs (input_registry.h) is
// refused before anything is written.
class OutputFile {
 public:
  explicit OutputFile(const std::string& path);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  FILE* stream() const { return stream_; }
  const std::string& name() const { return name_; }  // the final path, or "<stdout>"
  // Flushes, closes and renames into place. Throws gguflow::Error naming the file on failure.
  void commit();

 private:
  void open_in_place();  // writes path_ itself (a device, a FIFO, a process's open file)

  std::string path_, temp_path_, name_;
  FILE* stream_ = nullptr;
  bool committed_ = false;
  bool in_place_ = false;  // a device or FIFO: written directly, closed by commit()
  int kept_mode_ = -1;     // the replaced file's permission bits
  int temp_slot_ = -1;  // where the signal handler finds temp_path_ (output_file.cc)
};

}  // namespace gguflow
