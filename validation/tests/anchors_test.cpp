// Published multi-node figures (validation/data/published/anchors.toml) against the default parameter set.
#include <doctest/doctest.h>

#include "commsim/workloads/registry.hpp"

#include <string>
#include <vector>

#include <toml++/toml.h>

#include "commsim/core/text.hpp"
#include "commsim/core/units.hpp"
#include "commsim/models/nccl_env.hpp"
#include "commsim/models/params.hpp"
#include "commsim/models/transfer.hpp"
#include "commsim/sim/runtime.hpp"
#include "commsim/sim/schedules.hpp"
#include "commsim/sim/workloads.hpp"
#include "commsim/topo/load.hpp"

using namespace commsim;

namespace {

const std::string kSource = COMMSIM_SOURCE_DIR;

std::vector<std::string> strings(const toml::node_view<const toml::node>& n) {
  std::vector<std::string> out;
  if (const auto* a = n.as_array()) {
    for (const auto& v : *a) out.push_back(std::string(*v.value<std::string_view>()));
  }
  return out;
}

}  // namespace

TEST_CASE("anchors: predictions fall inside the published multi-node ranges") {
  const toml::table root = toml::parse_file(kSource + "/validation/data/published/anchors.toml");
  const auto* anchors = root["anchor"].as_array();
  REQUIRE(anchors);
  REQUIRE(anchors->size() >= 2);
  const models::ModelParams params = models::ModelParams::load(kSource + "/models/params/nccl-default.toml");
  for (const auto& node : *anchors) {
    const toml::table& a = *node.as_table();
    const std::string name(*a["name"].value<std::string_view>());
    CAPTURE(name);
    CHECK(!a["source"].value_or(std::string()).empty());
    topo::Diagnostics diag;
    const topo::Topology t =
        topo::load_topology(kSource + "/" + *a["topology"].value<std::string>(), {}, diag);
    const auto model =
        models::make_transfer_model("nccl", params, models::NcclEnv::parse(strings(a["nccl_env"])));
    sim::Runtime rt(t, *model);
    const std::string workload(*a["workload"].value<std::string_view>());
    std::vector<int> gpus;
    if (const auto* g = a["gpus"].as_array()) {
      for (const auto& v : *g) gpus.push_back(static_cast<int>(*v.value<std::int64_t>()));
    } else {
      for (int i = 0; i < static_cast<int>(t.gpus.size()); ++i) gpus.push_back(i);
    }
    const double low = *a["low"].value<double>(), high = *a["high"].value<double>();
    const std::string metric(*a["metric"].value<std::string_view>());
    const double nics = static_cast<double>(t.nodes.at(0).nics.size());
    for (const std::string& size : strings(a["sizes"])) {
      const std::uint64_t bytes = parse_size(size);
      sim::Program p = workload == "p2p"
                           ? sim::p2p_program(gpus.at(0), gpus.at(1), bytes)
                           : sim::collective_program(gpus, sim::parse_coll_op(workload), bytes, 0, true);
      p.warmup = 1;
      p.iterations = 3;
      const double seconds = static_cast<double>(rt.run(p).per_iteration) / 1e12;
      const double algbw = static_cast<double>(bytes) / seconds / 1e9;
      const double value =
          metric == "bandwidth"
              ? algbw
              : algbw * workloads::find_workload(workload).busbw_factor(static_cast<int>(gpus.size())) / nics;
      CAPTURE(size);
      CAPTURE(value);
      CHECK(value >= low);
      CHECK(value <= high);
    }
  }
}

TEST_CASE("anchors: the default parameter set carries NCCL's network latency constants") {
  const toml::table root = toml::parse_file(kSource + "/validation/data/published/anchors.toml");
  const models::ModelParams p = models::ModelParams::load(kSource + "/models/params/nccl-default.toml");
  const char* keys[3] = {"ll_net_hop", "ll128_net_hop", "simple_net_hop"};
  for (int proto = 0; proto < 3; ++proto) {
    CAPTURE(keys[proto]);
    CHECK(p.coll.net_hop_latency[proto] ==
          parse_duration(*root["latency"][keys[proto]].value<std::string>()));
  }
}
