// Reading a whole file: a directory or a file that cannot be opened is an error, never an empty text.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/core/text_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "runtime/core/error.hpp"
#include "runtime/core/interrupt.hpp"

namespace vnt {

std::string read_text_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    raise(ErrorKind::kIo, "cannot read '{}': {}", path, std::strerror(EISDIR));
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) raise(ErrorKind::kIo, "cannot read '{}': {}", path, std::strerror(errno));
  // Read straight into the string, its size reserved (one copy of a large data file in memory, not two), in
  // pieces between which an interrupt can stop the read (a slow file system, a file of gigabytes).
  constexpr size_t kPiece = size_t{1} << 24;
  std::string text;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec) text.reserve(static_cast<size_t>(size) + 1);  // + 1: the read that finds the end needs no more room
  for (;;) {
    const size_t at = text.size();
    const size_t room = text.capacity() - at;
    const size_t want = room > 0 ? std::min(room, kPiece) : kPiece;
    text.resize(at + want);
    in.read(text.data() + at, static_cast<std::streamsize>(want));
    text.resize(at + static_cast<size_t>(in.gcount()));
    if (!in) break;
    poll_interrupt();
  }
  if (in.bad()) raise(ErrorKind::kIo, "cannot read '{}': {}", path, std::strerror(errno));
  return text;
}

}  // namespace vnt
