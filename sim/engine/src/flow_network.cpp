// Max-min fair bandwidth sharing with per-flow caps, recomputed at flow arrivals and departures.
#include "commsim/sim/flow_network.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "commsim/core/error.hpp"

namespace commsim::sim {
namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}

FlowNetwork::ResourceId FlowNetwork::add_resource(double capacity, std::string name, double saturation) {
  if (!(capacity > 0)) throw Error("resource '" + name + "' needs a positive capacity");
  Resource res;
  res.capacity = capacity;
  res.saturation = saturation;
  res.name = std::move(name);
  resources_.push_back(std::move(res));
  return static_cast<ResourceId>(resources_.size() - 1);
}

FlowNetwork::FlowId FlowNetwork::start(std::vector<ResourceId> path, double bytes, double cap, Done done) {
  owned_paths_.push_back(std::move(path));
  return start_on(owned_paths_.back(), bytes, cap, std::move(done));
}

FlowNetwork::FlowId FlowNetwork::start_on(const std::vector<ResourceId>& path, double bytes, double cap,
                                          Done done) {
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

void FlowNetwork::mark_stale() {
  stale_ = true;
  ++generation_;  // completions scheduled under the old rates are void
  if (flush_queued_) return;
  flush_queued_ = true;
  events_.after(0, [this] {
    flush_queued_ = false;
    settle();
  });
}

void FlowNetwork::settle() {
  if (!stale_) return;
  stale_ = false;
  recompute();
  schedule_next();
}

void FlowNetwork::advance() {
  const Picoseconds now = events_.now();
  const double dt = static_cast<double>(now - last_update_) / 1e12;
  if (dt > 0) {
    for (FlowId id : active_) flows_[id].remaining -= flows_[id].rate * dt;
  }
  last_update_ = now;
}

void FlowNetwork::recompute() {
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

void FlowNetwork::schedule_next() {
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

void FlowNetwork::on_completion(std::uint64_t generation) {
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

}  // namespace commsim::sim
