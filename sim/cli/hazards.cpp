// Reads the known-hazards table (validation/data/hazards.toml), embedded in commsim at build time.
#include "hazards.hpp"

#include "commsim/core/embedded.hpp"
#include "commsim/core/error.hpp"
#include "commsim/core/toml_fields.hpp"

namespace commsim::cli {

std::span<const EmbeddedFile> embedded_hazards();

std::vector<Hazard> parse_hazards(std::string_view toml_text, const std::string& file) {
  const toml::table root = parse_toml(toml_text, file);
  TomlFields top(root, file, "");
  top.reject_unknown_keys({"hazard"});
  const toml::array* list = root["hazard"].as_array();
  if (!list) top.fail("hazard", "expected [[hazard]] tables");
  std::vector<Hazard> out;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const toml::table* t = (*list)[i].as_table();
    if (!t) top.fail("hazard", "every element must be a [[hazard]] table");
    TomlFields f(*t, file, "[[hazard]] " + std::to_string(i + 1));
    f.reject_unknown_keys({"id", "kind", "workload", "schedule", "framework", "mode", "hung_from", "ok_up_to",
                           "faster", "than", "measured_on", "evidence", "text"});
    Hazard h;
    h.id = f.required_string("id");
    h.kind = f.required_string("kind");
    h.workload = f.required_string("workload");
    h.schedule = f.string("schedule").value_or("");
    h.framework = f.string("framework").value_or("");
    h.measured_on = f.required_string("measured_on");
    h.evidence = f.required_string("evidence");
    h.text = f.required_string("text");
    if (h.schedule != "" && h.schedule != "1f1b" && h.schedule != "interleaved")
      f.fail("schedule", "must be \"1f1b\" or \"interleaved\"");
    if (h.framework != "" && h.framework != "nccl" && h.framework != "torch")
      f.fail("framework", "must be \"nccl\" or \"torch\"");
    if (h.kind == "hang") {
      h.mode = f.required_string("mode");
      const auto from = f.size("hung_from");
      const auto ok = f.size("ok_up_to");
      if (!from) f.fail("hung_from", "a hang needs hung_from (the smallest size measured to hang)");
      h.hung_from = *from;
      h.ok_up_to = ok.value_or(0);
      if (h.ok_up_to >= h.hung_from) f.fail("ok_up_to", "must be below hung_from");
    } else if (h.kind == "disagrees") {
      h.faster = f.required_string("faster");
      h.than = f.required_string("than");
    } else {
      f.fail("kind", "must be \"hang\" or \"disagrees\"");
    }
    out.push_back(std::move(h));
  }
  return out;
}

const std::vector<Hazard>& known_hazards() {
  static const std::vector<Hazard> hazards = [] {
    for (const auto& f : embedded_hazards()) {
      if (f.path == "hazards.toml") return parse_hazards(f.contents, "validation/data/hazards.toml");
    }
    throw Error("validation/data/hazards.toml was not embedded in this build");
  }();
  return hazards;
}

}  // namespace commsim::cli
