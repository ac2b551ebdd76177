// Reference: the whole-network flow solver that the incremental FlowNetwork replaced (issue 17).
// flow_network_equivalence_test.cpp and engine_bench's FlowChurn compare the two.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "commsim/core/error.hpp"
#include "commsim/core/units.hpp"
#include "commsim/sim/event_queue.hpp"

namespace commsim::sim::reference {
namespace detail {
constexpr double kInf = std::numeric_limits<double>::infinity();
}
using detail::kInf;

/// Resources (directed links, or virtual limits such as a GPU's host-memory copy rate) with a capacity in
/// bytes/s, and flows that each cross a list of resources. Rates are the max-min fair allocation subject to
/// each flow's own cap; they are recomputed once per instant at which flows start or end. Completion events
/// go on the shared EventQueue; a completion that a rate change made stale is ignored.
class ReferenceFlowNetwork {
 public:
  using ResourceId = int;
  using FlowId = int;
  using Done = std::function<void()>;
  /// Called after every rate recomputation with the resources whose load changed (for traces).
  using LoadObserver = std::function<void(Picoseconds now, ResourceId r, double load_bytes_per_s)>;

  explicit ReferenceFlowNetwork(EventQueue& events) : events_(events) {}

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

inline ReferenceFlowNetwork::ResourceId ReferenceFlowNetwork::add_resource(double capacity, std::string name,
                                                                           double saturation) {
  if (!(capacity > 0)) throw Error("resource '" + name + "' needs a positive capacity");
  Resource res;
  res.capacity = capacity;
  res.saturation = saturation;
  res.name = std::move(name);
  resources_.push_back(std::move(res));
  return static_cast<ResourceId>(resources_.size() - 1);
}

inline ReferenceFlowNetwork::FlowId ReferenceFlowNetwork::start(std::vector<ResourceId> path, double bytes,
                                                                double cap, Done done) {
  owned_paths_.push_back(std::move(path));
  return start_on(owned_paths_.back(), bytes, cap, std::move(done));
}

inline ReferenceFlowNetwork::FlowId ReferenceFlowNetwork::start_on(const std::vector<ResourceId>& path,
                                                                   double bytes, double cap, Done done) {
  for (ResourceId r : path) {
    if (r < 0 || static_cast<std::size_t>(r) >= resources_.size()) throw Error("flow on an unknown resource");
  }
  if (path.empty() && cap <= 0) throw Error("a flow needs a resource or a rate cap");
  advance();
  Flow f;
  f.path = &path;
  f.remaining = std::max(bytes, 0.0);
  f.cap = cap;
  f.done = std::move(done);
  f.active = true;
  // Slots of completed flows are reused: a long run keeps as many slots as flows ever active at once.
  FlowId id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
    flows_[id] = std::move(f);
  } else {
    id = static_cast<FlowId>(flows_.size());
    flows_.push_back(std::move(f));
  }
  active_.push_back(id);
  mark_stale();
  return id;
}

inline void ReferenceFlowNetwork::mark_stale() {
  stale_ = true;
  ++generation_;  // completions scheduled under the old rates are void
  if (flush_queued_) return;
  flush_queued_ = true;
  events_.after(0, [this] {
    flush_queued_ = false;
    settle();
  });
}

inline void ReferenceFlowNetwork::settle() {
  if (!stale_) return;
  stale_ = false;
  recompute();
  schedule_next();
}

inline void ReferenceFlowNetwork::advance() {
  const Picoseconds now = events_.now();
  const double dt = static_cast<double>(now - last_update_) / 1e12;
  if (dt > 0) {
    for (FlowId id : active_) flows_[id].remaining -= flows_[id].rate * dt;
  }
  last_update_ = now;
}

inline void ReferenceFlowNetwork::recompute() {
  ++recomputations_;
  // Water-filling: raise all unfrozen flows together; freeze those stopped by their own cap or by a saturated
  // resource. Ties and order are deterministic (flows in start order, resources in first-touch order).
  std::vector<ResourceId> touched;
  for (FlowId id : active_) {
    for (ResourceId r : *flows_[id].path) {
      Resource& res = resources_[r];
      if (res.unfrozen++ == 0) {
        touched.push_back(r);
        res.demand = 0;
      }
      res.demand += flows_[id].cap > 0 ? flows_[id].cap : kInf;
    }
  }
  for (ResourceId r : touched) {
    Resource& res = resources_[r];
    res.residual = res.capacity;
    if (res.saturation > 0 && res.demand < kInf) {
      const double x = res.demand / res.capacity;
      res.residual = res.demand / std::pow(1.0 + std::pow(x, res.saturation), 1.0 / res.saturation);
    }
  }
  std::vector<double> initial;  // usable capacity before filling, to report loads
  initial.reserve(touched.size());
  for (ResourceId r : touched) initial.push_back(resources_[r].residual);
  std::vector<FlowId> pending = active_;
  std::vector<FlowId> next;
  while (!pending.empty()) {
    double level = kInf;
    for (ResourceId r : touched) {
      const Resource& res = resources_[r];
      if (res.unfrozen > 0) level = std::min(level, res.residual / res.unfrozen);
    }
    for (FlowId id : pending) {
      if (flows_[id].cap > 0) level = std::min(level, flows_[id].cap);
    }
    if (level == kInf) throw Error("flow with unbounded rate");
    const double limit = level * (1 + 1e-12);
    next.clear();
    std::vector<FlowId> frozen;
    for (FlowId id : pending) {
      Flow& f = flows_[id];
      bool freeze = f.cap > 0 && f.cap <= limit;
      for (ResourceId r : *f.path) {
        const Resource& res = resources_[r];
        freeze = freeze || res.residual / res.unfrozen <= limit;
      }
      if (freeze) {
        f.rate = level;
        frozen.push_back(id);
      } else {
        next.push_back(id);
      }
    }
    for (FlowId id : frozen) {
      for (ResourceId r : *flows_[id].path) {
        Resource& res = resources_[r];
        res.residual = std::max(0.0, res.residual - level);
        --res.unfrozen;
      }
    }
    if (frozen.empty()) throw Error("water-filling made no progress");
    pending.swap(next);
  }
  // Loads, and the resources that lost their last flow.
  for (ResourceId r : loaded_) resources_[r].mark = true;
  for (std::size_t i = 0; i < touched.size(); ++i) {
    const ResourceId r = touched[i];
    Resource& res = resources_[r];
    const double load = initial[i] - res.residual;
    if (observer_ && std::fabs(load - res.load) > 1e-6 * res.capacity) observer_(events_.now(), r, load);
    res.load = load;
    res.mark = false;
    res.unfrozen = 0;
  }
  for (ResourceId r : loaded_) {
    Resource& res = resources_[r];
    if (res.mark) {
      res.mark = false;
      res.load = 0;
      if (observer_) observer_(events_.now(), r, 0.0);
    }
  }
  loaded_.swap(touched);
}

inline void ReferenceFlowNetwork::schedule_next() {
  ++generation_;
  double earliest = kInf;
  for (FlowId id : active_) {
    const Flow& f = flows_[id];
    const double t = f.remaining <= 0 ? 0.0 : f.remaining / f.rate;
    earliest = std::min(earliest, t);
  }
  if (earliest == kInf) return;
  const Picoseconds delay = static_cast<Picoseconds>(std::ceil(earliest * 1e12 - 1e-6));
  const std::uint64_t gen = generation_;
  events_.after(std::max<Picoseconds>(delay, 0), [this, gen] { on_completion(gen); });
}

inline void ReferenceFlowNetwork::on_completion(std::uint64_t generation) {
  if (generation != generation_) return;  // rates changed since this was scheduled
  advance();
  std::vector<FlowId> finished;
  std::vector<FlowId> still;
  for (FlowId id : active_) {
    Flow& f = flows_[id];
    // Done when less than a picosecond of transfer is left (the completion time was rounded up).
    if (f.remaining <= f.rate * 1e-12 + 1e-9) {
      finished.push_back(id);
    } else {
      still.push_back(id);
    }
  }
  active_.swap(still);
  for (FlowId id : finished) {
    flows_[id].active = false;
    flows_[id].remaining = 0;
  }
  mark_stale();
  for (FlowId id : finished) {
    Done d = std::move(flows_[id].done);
    flows_[id].done = nullptr;
    free_.push_back(id);
    if (d) d();
  }
}

}  // namespace commsim::sim::reference
