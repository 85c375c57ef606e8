// Reading a whole program or data file, with the reason in the error when it cannot be read.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

namespace vnt {

/// The whole content of the file at `path`. Throws kIo "cannot read 'path': reason" if it cannot be opened or
/// read, including when it is a directory (which opens as a stream on Linux but has no text). Polls the thread's
/// interrupt check (interrupt.hpp) every 16 MiB.
std::string read_text_file(const std::string& path);

}  // namespace vnt
