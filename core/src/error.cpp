// SourceLocation formatting for error messages.
#include "commsim/core/error.hpp"

namespace commsim {

std::string SourceLocation::str() const {
  std::string out = file.empty() ? std::string("<input>") : file;
  if (line > 0) {
    out += ":" + std::to_string(line);
    if (column > 0) out += ":" + std::to_string(column);
  }
  return out;
}

}  // namespace commsim
