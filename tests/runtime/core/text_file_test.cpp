// Reading a whole file: the reason when it cannot be read, the exact bytes when it can, and an interrupt between
// the pieces of a large one.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "runtime/core/error.hpp"
#include "runtime/core/interrupt.hpp"
#include "runtime/core/text_file.hpp"

namespace vnt::text_file_tests {
namespace {

TEST_CASE("read_text_file: a directory or a missing file is an i/o error with the reason") {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / "vnt_text_file_test_dir";
  std::filesystem::create_directories(dir);
  try {
    read_text_file(dir.string());
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kIo);
    CHECK(e.message() == "cannot read '" + dir.string() + "': Is a directory");
  }
  std::filesystem::remove(dir);
  CHECK_THROWS_AS(read_text_file((dir / "missing.vnt").string()), Error);
  std::filesystem::path file = std::filesystem::temp_directory_path() / "vnt_text_file_test.vnt";
  std::ofstream(file) << "[predict 1]\n";
  CHECK(read_text_file(file.string()) == "[predict 1]\n");
  std::filesystem::remove(file);
}

TEST_CASE("read_text_file: every byte of a file larger than one piece, and of an empty file") {
  std::filesystem::path file = std::filesystem::temp_directory_path() / "vnt_text_file_test_big.csv";
  std::string text;
  for (size_t i = 0; text.size() < (size_t{1} << 24) + 12345; ++i) text += std::to_string(i) + ",\r\n\0";
  std::ofstream(file, std::ios::binary) << text;
  CHECK(read_text_file(file.string()) == text);
  std::ofstream(file, std::ios::binary | std::ios::trunc).flush();
  CHECK(read_text_file(file.string()).empty());
  std::filesystem::remove(file);
}

// An interrupt stops the read between two pieces (of 16 MiB): a file of gigabytes on a slow file system could
// otherwise hold Ctrl-C for as long as it takes.
TEST_CASE("read_text_file: an interrupt stops the read of a large file") {
  std::filesystem::path file = std::filesystem::temp_directory_path() / "vnt_text_file_test_interrupt.csv";
  std::ofstream(file, std::ios::binary) << std::string((size_t{1} << 24) + 1, 'x');
  int polls = 0;
  InterruptScope scope(
      [](const void* context) {
        ++*static_cast<int*>(const_cast<void*>(context));
        throw Error(ErrorKind::kInference, "interrupted");
      },
      &polls);
  CHECK_THROWS_WITH_AS(read_text_file(file.string()), "interrupted", Error);
  CHECK(polls == 1);
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace vnt::text_file_tests
