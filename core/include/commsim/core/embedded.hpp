// Files compiled into the binary (presets, parameter sets) so commsim runs from any directory.
#pragma once

#include <span>
#include <string_view>

namespace commsim {

/// One embedded text file: its path relative to the directory it was embedded from, and its bytes.
struct EmbeddedFile {
  std::string_view path;
  std::string_view contents;
};

}  // namespace commsim
