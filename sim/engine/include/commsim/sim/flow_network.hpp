// Flow-level bandwidth sharing: flows on paths of directed resources, max-min fair with per-flow rate caps.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "commsim/core/units.hpp"
#include "commsim/sim/event_queue.hpp"

namespace commsim::sim {

/// Resources (directed links, or virtual limits such as a GPU's host-memory copy rate) with a capacity in
/// bytes/s, and flows that each cross a list of resources. Rates are the max-min fair allocation subject to
/// each flow's own cap; they are recomputed once per instant at which flows start or end. Completion events
/// go on the shared EventQueue; a completion that a rate change made stale is ignored.
class FlowNetwork {
 public:
  using ResourceId = int;
  using FlowId = int;
  using Done = std::function<void()>;
  /// Called after every rate recomputation with the resources whose load changed (for traces).
  using LoadObserver = std::function<void(Picoseconds now, ResourceId r, double load_bytes_per_s)>;

  explicit FlowNetwork(EventQueue& events) : events_(events) {}

  /// `saturation` 0 makes the capacity a hard limit. A positive k makes the resource deliver less than its
  /// capacity as the offered load D (the sum of its flows' caps) approaches it: the usable capacity is
  /// D / (1 + (D/C)^k)^(1/k), a smooth minimum of D and C that tends to the hard one as k grows.
  ResourceId add_resource(double capacity, std::string name, double saturation = 0);
  double capacity(ResourceId r) const { return resources_[r].capacity; }
  const std::string& resource_name(ResourceId r) const { return resources_[r].name; }
  std::size_t resource_count() const { return resources_.size(); }

  /// Starts a flow of `bytes` over `path` now; `cap` limits its rate (0 = no own limit). `done` runs when the
  /// last byte has arrived. A flow with no resources and no cap completes at once. The id names the flow
  /// until it completes; a later flow may reuse it.
  FlowId start(std::vector<ResourceId> path, double bytes, double cap, Done done);
  /// The same, for a path the caller keeps alive (and unchanged) until the flow completes: no copy. The
  /// simulator's routes live as long as the runtime, so its many flows share them.
  FlowId start_on(const std::vector<ResourceId>& path, double bytes, double cap, Done done);

  /// The flow's current rate (settles pending starts first).
  double rate(FlowId f) {
    settle();
    return flows_[f].rate;
  }
  std::size_t active_flows() const { return active_.size(); }
  std::uint64_t recomputations() const { return recomputations_; }
  void set_load_observer(LoadObserver obs) { observer_ = std::move(obs); }

 private:
  struct Resource {
    double capacity = 0;
    double saturation = 0;
    std::string name;
    double demand = 0;    ///< scratch: offered load
    double load = 0;      ///< sum of rates of active flows
    double residual = 0;  ///< scratch for water-filling
    int unfrozen = 0;     ///< scratch for water-filling
    bool mark = false;    ///< scratch for load bookkeeping
  };
  struct Flow {
    const std::vector<ResourceId>* path = nullptr;  ///< in owned_paths_, or a caller's path (start_on)
    double remaining = 0;
    double cap = 0;
    double rate = 0;
    Done done;
    bool active = false;
  };

  void advance();        ///< moves every active flow's bytes forward to events_.now()
  void recompute();      ///< max-min fair rates (water-filling)
  void schedule_next();  ///< the earliest completion, tagged with the current generation
  void on_completion(std::uint64_t generation);
  /// Rates are recomputed once per instant: starts and completions mark the allocation stale and one event
  /// at the same time (after everything already queued for it) recomputes, so n flows started together cost
  /// one water-filling instead of n.
  void mark_stale();
  void settle();
  bool stale_ = false;
  bool flush_queued_ = false;

  EventQueue& events_;
  std::deque<std::vector<ResourceId>> owned_paths_;  ///< paths given by value to start(); never move
  std::vector<Resource> resources_;
  std::vector<Flow> flows_;
  std::vector<FlowId> free_;  ///< slots of completed flows, reused by later starts
  std::vector<FlowId> active_;
  std::vector<ResourceId> loaded_;  ///< resources with load after the last recomputation
  Picoseconds last_update_ = 0;
  std::uint64_t generation_ = 0;
  std::uint64_t recomputations_ = 0;
  LoadObserver observer_;
};

}  // namespace commsim::sim
