// Known hazards (validation/data/hazards.toml, embedded): what real hardware did that the simulator does not
// predict.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace commsim::cli {

/// One [[hazard]] of validation/data/hazards.toml (the file documents every key).
struct Hazard {
  std::string id;
  std::string kind;  ///< "hang" or "disagrees"
  std::string workload;
  std::string schedule;   ///< "" : every schedule
  std::string framework;  ///< "" : every framework
  std::string mode;       ///< hang: the mode that hung
  std::uint64_t hung_from = 0;
  std::uint64_t ok_up_to = 0;
  std::string faster, than;  ///< disagrees: the predicted order it concerns
  std::string measured_on;
  std::string evidence;
  std::string text;
};

/// Parses a hazards file; InputError naming file, line and column on a bad key or value.
std::vector<Hazard> parse_hazards(std::string_view toml_text, const std::string& file);
/// The hazards embedded from validation/data/hazards.toml.
const std::vector<Hazard>& known_hazards();

}  // namespace commsim::cli
