// Reading a whole file: a directory or a file that cannot be opened is an error, never an empty text.
// SPDX-License-Identifier: Apache-2.0
#include "runtime/core/text_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "runtime/core/error.hpp"

namespace vnt {

std::string read_text_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    raise(ErrorKind::kIo, "cannot read '{}': {}", path, std::strerror(EISDIR));
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) raise(ErrorKind::kIo, "cannot read '{}': {}", path, std::strerror(errno));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace vnt
