// Max-min fair flow rates with caps, re-solved per changed connected component; identical flows coalesced.
#include "commsim/sim/flow_network.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "commsim/core/error.hpp"
#include "commsim/models/link_kind.hpp"

namespace commsim::sim {
namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

/// Sorts `v` by an unsigned key: least-significant-digit radix sort (stable), 8 bits a pass and only as many
/// passes as the keys' range needs; `scratch` is swapped with `v`. The flows that end at one instant can
/// number thousands, where this costs a fraction of a comparison sort. Short lists use std::sort.
template <typename T, typename Key>
void sort_by_key(std::vector<T>& v, std::vector<T>& scratch, Key key) {
  if (v.size() < 64) {
    std::sort(v.begin(), v.end(), [&](const T& a, const T& b) { return key(a) < key(b); });
    return;
  }
  std::uint64_t lo = std::numeric_limits<std::uint64_t>::max(), hi = 0;
  for (const T& x : v) {
    lo = std::min<std::uint64_t>(lo, key(x));
    hi = std::max<std::uint64_t>(hi, key(x));
  }
  scratch.resize(v.size());
  for (int shift = 0; shift < 64 && ((hi - lo) >> shift) != 0; shift += 8) {
    std::size_t count[257] = {};
    for (const T& x : v) ++count[((key(x) - lo) >> shift & 255) + 1];
    for (std::size_t i = 1; i < 257; ++i) count[i] += count[i - 1];
    for (const T& x : v) scratch[count[(key(x) - lo) >> shift & 255]++] = x;
    v.swap(scratch);
  }
}
/// Fetches the resources of `route` (their first cache line, or both with `both_lines`) ahead of a loop's
/// later iteration.
template <typename Resource>
void fetch_route(const std::vector<Resource>& resources, std::span<const int> route,
                 bool both_lines = false) {
  for (const int r : route) {
    const Resource* res = &resources[static_cast<std::size_t>(r)];
    __builtin_prefetch(res);
    if (both_lines) __builtin_prefetch(reinterpret_cast<const char*>(res) + 64);
  }
}
}  // namespace

FlowNetwork::Storage FlowNetwork::release_storage() {
  Storage s;
  s.class_lists.reserve(resources_.size());
  for (Resource& r : resources_) {
    r.classes.clear();
    s.class_lists.push_back(std::move(r.classes));
  }
  for (std::vector<int>* v : int_arrays()) {
    v->clear();
    s.ints.push_back(std::move(*v));
  }
  for (std::vector<std::uint64_t>* v : word_arrays()) {
    v->clear();
    s.words.push_back(std::move(*v));
  }
  classes_.clear();
  members_.clear();
  shares_.clear();
  levels_.clear();
  later_.clear();
  s.classes = std::move(classes_);
  s.members = std::move(members_);
  s.shares = std::move(shares_);
  s.levels = std::move(levels_);
  s.later = std::move(later_);
  s.recent = std::move(recent_);
  s.recent_epoch = recent_epoch_;
  while (!due_.empty()) erase_bucket(due_.begin());  // its vectors join the (emptied) spare buckets
  s.spare_buckets = std::move(spare_buckets_);
  return s;
}

std::size_t FlowNetwork::Storage::bytes() const {
  const auto of = [](const auto& v) { return v.capacity() * sizeof(v[0]); };
  std::size_t n = of(class_lists) + of(ints) + of(words) + of(classes) + of(members) + of(shares) +
                  of(levels) + of(later) + of(spare_buckets) + of(recent);
  for (const auto& v : class_lists) n += of(v);
  for (const auto& v : ints) n += of(v);
  for (const auto& v : words) n += of(v);
  for (const auto& v : spare_buckets) n += of(v);
  return n;
}

void FlowNetwork::adopt_storage(Storage&& s) {
  // release_storage() emptied every vector: only capacity is taken.
  const auto take = [](auto& mine, auto& given) {
    if (mine.empty() && mine.capacity() < given.capacity()) mine.swap(given);
  };
  for (std::size_t i = 0; i < resources_.size() && i < s.class_lists.size(); ++i) {
    take(resources_[i].classes, s.class_lists[i]);
  }
  const auto ints = int_arrays();
  for (std::size_t i = 0; i < ints.size() && i < s.ints.size(); ++i) take(*ints[i], s.ints[i]);
  const auto words = word_arrays();
  for (std::size_t i = 0; i < words.size() && i < s.words.size(); ++i) take(*words[i], s.words[i]);
  take(classes_, s.classes);
  take(members_, s.members);
  take(shares_, s.shares);
  take(levels_, s.levels);
  take(later_, s.later);
  if (spare_buckets_.empty()) spare_buckets_ = std::move(s.spare_buckets);
  // The last network's recent classes stay in the slots, stamped with its epoch: a new epoch voids them
  // without clearing 4,096 slots (192 KB) a run.
  if (recent_.empty() && s.recent.size() == kRecent) {
    recent_.swap(s.recent);
    recent_epoch_ = s.recent_epoch + 1;
    if (recent_epoch_ == 0) {  // after 2^32 runs: stamps could repeat
      std::fill(recent_.begin(), recent_.end(), Recent{});
      recent_epoch_ = 1;
    }
  }
}

FlowNetwork::ResourceId FlowNetwork::add_resource(double capacity, std::string name, double saturation) {
  if (!(capacity > 0)) throw Error("resource '" + name + "' needs a positive capacity");
  Resource res;
  res.capacity = capacity;
  res.saturation = saturation;
  resources_.push_back(std::move(res));
  if (resources_.size() > 64 * dirty_bits_.size()) dirty_bits_.push_back(0);
  fetch_ahead_ = resources_.size() > kFetchAhead;
  const auto id = static_cast<ResourceId>(resources_.size() - 1);
  if (!name.empty()) names_.emplace(id, std::move(name));
  return id;
}

FlowNetwork::FlowId FlowNetwork::start(std::vector<ResourceId> path, double bytes, double cap, Done done) {
  owned_paths_.push_back(std::move(path));
  return start_on(owned_paths_.back(), bytes, cap, std::move(done));
}

FlowNetwork::FlowId FlowNetwork::start_tagged(std::span<const ResourceId> path, double bytes, double cap,
                                              Tag tag) {
  if (tag & kDoneTag) throw Error("a flow's tag must be below 2^63");
  if (!tag_handler_) throw Error("a tagged flow needs a tag handler");
  return start_flow(path, path.data(), bytes, cap, tag, nullptr);
}

FlowNetwork::Tag FlowNetwork::done_tag(Done done) {
  std::size_t at;
  if (!free_dones_.empty()) {
    at = free_dones_.back();
    free_dones_.pop_back();
    dones_[at] = std::move(done);
  } else {
    at = dones_.size();
    if (at > std::numeric_limits<std::uint32_t>::max())
      throw Error("more than 2^32 flows with callbacks in flight");
    dones_.push_back(std::move(done));
  }
  return kDoneTag | at;
}

void FlowNetwork::free_class(int cls) {
  const auto slot = static_cast<std::size_t>(cls);
  const std::size_t word = slot >> 6, summary = slot >> 12;
  if (word >= free_bits_.size()) free_bits_.resize(word + 1, 0);
  if (summary >= free_summary_.size()) free_summary_.resize(summary + 1, 0);
  free_bits_[word] |= std::uint64_t{1} << (slot & 63);
  free_summary_[summary] |= std::uint64_t{1} << (word & 63);
  free_low_ = std::min(free_low_, summary);
  ++free_count_;
}

int FlowNetwork::pop_free_class() {
  std::size_t summary = free_low_;
  while (free_summary_[summary] == 0) ++summary;
  free_low_ = summary;
  const std::size_t word = summary * 64 + static_cast<std::size_t>(std::countr_zero(free_summary_[summary]));
  const std::size_t slot = word * 64 + static_cast<std::size_t>(std::countr_zero(free_bits_[word]));
  free_bits_[word] &= free_bits_[word] - 1;
  if (free_bits_[word] == 0) free_summary_[summary] &= free_summary_[summary] - 1;
  --free_count_;
  return static_cast<int>(slot);
}

int FlowNetwork::new_class() {
  int id;
  if (free_count_ > 0) {
    // The lowest free slot: flows started one after another get increasing slots, so flows that end together
    // come out of their instant's bucket (sorted by slot) nearly in start order.
    id = pop_free_class();
  } else {
    id = static_cast<int>(classes_.size());
    classes_.emplace_back();
    if (classes_.size() > 64 * class_seen_.size()) {
      class_seen_.resize(class_seen_.size() + 1, 0);
      class_unfrozen_.resize(class_seen_.size(), 0);
    }
  }
  ++classes_[id].version;  // the completion of the slot's previous flow is void
  return id;
}

std::size_t FlowNetwork::recent_slot(std::span<const ResourceId> path, double cap, double bytes) {
  std::uint64_t h = path.size() * 0x9e3779b97f4a7c15ULL;
  if (!path.empty())
    h ^= (static_cast<std::uint64_t>(path.front()) << 32 | static_cast<std::uint32_t>(path.back()));
  // (The slot decides which identical starts coalesce when another flow took it between them: kept as it
  // was.)
  h ^= std::hash<double>()(cap) * 0xc2b2ae3d27d4eb4fULL ^ std::hash<double>()(bytes) * 0x165667b19e3779f9ULL;
  h ^= h >> 29;
  return h % kRecent;
}

void FlowNetwork::prefetch(std::span<const ResourceId> path, double bytes, double cap) const {
  if (!fetch_ahead_) return;
  for (ResourceId r : path) {
    if (r >= 0 && static_cast<std::size_t>(r) < resources_.size())
      __builtin_prefetch(&resources_[static_cast<std::size_t>(r)]);
  }
  if (!recent_.empty()) __builtin_prefetch(&recent_[recent_slot(path, cap, std::max(bytes, 0.0))]);
}

FlowNetwork::FlowId FlowNetwork::start_flow(std::span<const ResourceId> path, const void* key, double bytes,
                                            double cap, Tag tag, Done* done) {
  if (path.size() >= (std::size_t{1} << 30)) throw Error("a flow crosses more than 2^30 resources");
  bytes = std::max(bytes, 0.0);
  // Its slot among the recently started classes (read below), fetched first.
  const std::size_t recent_at = recent_slot(path, cap, bytes);
  if (!recent_.empty()) __builtin_prefetch(&recent_[recent_at]);
  for (ResourceId r : path) {
    if (r < 0 || static_cast<std::size_t>(r) >= resources_.size()) throw Error("flow on an unknown resource");
    // A new class appends to every resource's list below: on a large cluster each resource is a cache miss,
    // fetched here all at once rather than one after another.
    __builtin_prefetch(&resources_[static_cast<std::size_t>(r)]);
  }
  if (path.empty() && cap <= 0) throw Error("a flow needs a resource or a rate cap");
  if (done) tag = done_tag(std::move(*done));
  const Picoseconds now = events_.now();
  // An identical flow started at this instant: join it (no time has passed, so it still has `bytes` left).
  int cls = -1;
  if (recent_.empty()) recent_.resize(kRecent);  // (or adopted from the last run)
  Recent& slot = recent_[recent_at];
  if (slot.epoch == recent_epoch_ && slot.path == key && slot.len == path.size() && slot.time == now &&
      slot.cap == cap && slot.bytes == bytes) {
    const Class& c = classes_[slot.cls];
    // The slot may have been freed and reused since; a class that is active, on this very path with this
    // cap, and started at this instant with these bytes is identical to the flow either way. (The reuse of
    // a slot by an identical flow rewrites this entry, so this joins exactly the classes a stamp of the
    // slot's reuse would let through.)
    if (c.active && c.path == path.data() && c.path_len == path.size() && c.cap == cap && c.since == now &&
        c.remaining == bytes)
      cls = slot.cls;
  }
  if (cls < 0) {
    cls = new_class();
    Class& c = classes_[cls];
    c.path = path.data();
    c.path_len = static_cast<std::uint32_t>(path.size()) & ((std::uint32_t{1} << 30) - 1);  // checked above
    c.remaining = bytes;
    c.cap = cap;
    c.rate = 0;
    c.since = now;
    c.weight = 0;
    c.tail = -1;
    c.active = true;
    for (ResourceId r : path) resources_[r].classes.push_back(cls);
    slot = Recent{key, path.size(), cap, bytes, now, cls, recent_epoch_};
    ++active_classes_;
    ++created_classes_;
  }
  dirty_classes_.push_back(cls);
  // Slots of completed flows are reused: a long run keeps as many slots as flows ever active at once.
  FlowId id;
  if (free_member_ >= 0) {
    id = free_member_;
    free_member_ = members_[id].next;
    // The slot the next start takes, fetched while this one goes on (free slots are scattered).
    if (free_member_ >= 0) __builtin_prefetch(&members_[static_cast<std::size_t>(free_member_)]);
  } else {
    id = static_cast<FlowId>(members_.size());
    members_.emplace_back();
  }
  Member& m = members_[id];
  m.cls = cls;
  m.seq = next_seq_++;
  m.tag = tag;
  Class& c = classes_[cls];
  if (c.tail >= 0) {
    m.next = members_[c.tail].next;  // the first
    members_[c.tail].next = id;
  } else {
    m.next = id;
  }
  c.tail = id;
  ++c.weight;
  ++active_members_;
  mark_stale();
  return id;
}

double FlowNetwork::rate(FlowId f) {
  settle();
  return classes_[members_[f].cls].rate;
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

/// A solve of a huge component (a million flows started at one instant) leaves scratch of tens of MB; it is
/// freed, not kept for solves that do not need it. Small scratch is kept for reuse.
void FlowNetwork::release_solver_scratch() {
  release_if_large(comp_);
  release_if_large(comp_res_);
  release_if_large(stack_);
  release_if_large(caps_);
  release_if_large(rates_);
  release_if_large(levels_);
  release_if_large(shares_);
  release_if_large(dirty_classes_);
}

void FlowNetwork::settle() {
  if (!stale_) return;
  stale_ = false;
  ++recomputations_;
  // The search stamps: a settle takes one, each water-filling round one, the loads' report one, so fewer than
  // 2^31 + 2 (every round freezes a class, and there are fewer than 2^31). Past 2^31 they restart here,
  // between searches, with every resource's cleared: no stamp from before can equal one handed out after.
  if (visit_ > 0x7fff'fff0U) {
    for (Resource& res : resources_) res.visit = 0;
    visit_ = 0;
  }
  std::vector<int>& comp = comp_;
  std::vector<ResourceId>& comp_res = comp_res_;
  comp.clear();
  comp_res.clear();
  // Drop the resource entries of flows that ended (every resource they crossed is dirty). The resources
  // further down the list are fetched ahead (thousands of them, scattered), and each is no longer dirty once
  // passed (nothing marks a resource dirty until the next completion).
  for (std::size_t i = 0; i < dirty_resources_.size(); ++i) {
    if (fetch_ahead_ && i + 16 < dirty_resources_.size())
      __builtin_prefetch(&resources_[dirty_resources_[i + 16]]);
    Resource& res = resources_[dirty_resources_[i]];
    dirty_bits_[static_cast<std::size_t>(dirty_resources_[i]) / 64] = 0;  // (clears its word's others too)
    // Lazily: only once ended entries are half of the list (iteration skips them), so a resource that many
    // flows cross and leave one by one costs amortised O(1) per flow, not its list's length.
    if (res.dead == 0 || 2 * static_cast<std::size_t>(res.dead) < res.classes.size()) continue;
    // An ended class's slot is freed once the last list naming it has dropped it.
    std::size_t kept = 0;
    for (const int ci : res.classes) {
      Class& c = classes_[ci];
      if (c.active) {
        res.classes[kept++] = ci;
      } else if (--c.weight == 0) {
        free_class(ci);
      }
    }
    res.classes.resize(kept);
    res.dead = 0;
    if (res.classes.capacity() > 4 * res.classes.size() + 16) res.classes.shrink_to_fit();
  }
  const std::uint32_t visit = next_visit();
  if (observer_) {
    // The whole network, flows in start order and resources in first-touch order, as loads are reported.
    for (std::size_t i = 0; i < classes_.size(); ++i) {
      if (classes_[i].active) comp.push_back(static_cast<int>(i));
    }
    std::sort(comp.begin(), comp.end(), [&](int a, int b) {
      return members_[head_of(classes_[a])].seq < members_[head_of(classes_[b])].seq;
    });
    for (int ci : comp) {
      for (ResourceId r : classes_[ci].route()) {
        if (resources_[r].visit != visit) {
          resources_[r].visit = visit;
          comp_res.push_back(r);
        }
      }
    }
  } else {
    // The connected components of what changed (flows started since the last solve, resources that lost a
    // flow), grown through shared resources and solved one by one: a component alone on its links is one
    // small solve, not part of a big one.
    std::vector<ResourceId>& stack = stack_;
    // The classes found this settle are marked in class_seen_ and listed in comp, component after component
    // (the one being searched starts at `begin`); their marks are cleared at the end.
    std::uint64_t* const seen = class_seen_.data();
    std::size_t begin = 0;
    auto add_class = [&](int ci) {
      const auto ui = static_cast<std::size_t>(ci);
      const std::uint64_t bit = std::uint64_t{1} << (ui % 64);
      // The bitmap first: a class reached through each resource of its path is read from memory once.
      if ((seen[ui / 64] & bit) != 0) return;
      const Class& c = classes_[ci];
      if (!c.active) return;
      seen[ui / 64] |= bit;
      comp.push_back(ci);
      for (ResourceId r : c.route()) {
        if (resources_[r].visit != visit) {
          resources_[r].visit = visit;
          stack.push_back(r);
        }
      }
    };
    auto grow_and_solve = [&] {
      while (!stack.empty()) {
        const ResourceId r = stack.back();
        stack.pop_back();
        comp_res.push_back(r);
        const std::vector<int>& list = resources_[r].classes;
        for (std::size_t i = 0; i < list.size(); ++i) {
          if (i + 8 < list.size()) {
            // Classes not reached yet are fetched ahead (a big component's are scattered over tens of MB),
            // and the resources of the one 4 on (its line fetched 4 entries ago).
            const auto ahead = static_cast<std::size_t>(list[i + 8]);
            if ((seen[ahead / 64] >> (ahead % 64) & 1) == 0) __builtin_prefetch(&classes_[ahead]);
          }
          if (fetch_ahead_ && i + 4 < list.size()) {
            const auto ahead = static_cast<std::size_t>(list[i + 4]);
            // (An ended class's path may be gone: only an active one's is read.)
            if ((seen[ahead / 64] >> (ahead % 64) & 1) == 0 && classes_[ahead].active) {
              fetch_route(resources_, classes_[ahead].route());
            }
          }
          add_class(list[i]);  // skips ended flows' entries
        }
      }
      // Search order is deterministic (start order through the resource lists): no sort needed.
      if (comp.size() > begin) solve(std::span<int>(comp).subspan(begin), comp_res);
      begin = comp.size();
      comp_res.clear();
    };
    stack.clear();
    for (std::size_t i = 0; i < dirty_classes_.size(); ++i) {
      // Fetched ahead: the classes 16 on, the resources of the class 8 on.
      if (fetch_ahead_ && i + 16 < dirty_classes_.size())
        __builtin_prefetch(&classes_[static_cast<std::size_t>(dirty_classes_[i + 16])]);
      if (fetch_ahead_ && i + 8 < dirty_classes_.size()) {
        const Class& ahead = classes_[static_cast<std::size_t>(dirty_classes_[i + 8])];
        if (ahead.active) fetch_route(resources_, ahead.route());
      }
      add_class(dirty_classes_[i]);
      grow_and_solve();
    }
    for (std::size_t i = 0; i < dirty_resources_.size(); ++i) {
      if (fetch_ahead_ && i + 8 < dirty_resources_.size())
        __builtin_prefetch(&resources_[dirty_resources_[i + 8]]);
      const ResourceId r = dirty_resources_[i];
      if (resources_[r].visit == visit) continue;
      resources_[r].visit = visit;
      stack.push_back(r);
      grow_and_solve();
    }
    for (const int ci : comp) {
      const auto ui = static_cast<std::size_t>(ci);
      seen[ui / 64] &= ~(std::uint64_t{1} << (ui % 64));
    }
    comp.clear();
    dirty_classes_.clear();
    clear_dirty_resources();
    schedule_next();
    release_solver_scratch();
    return;
  }
  dirty_classes_.clear();
  clear_dirty_resources();
  // solve() reorders its list; the loads are reported in start order.
  rates_.assign(comp.begin(), comp.end());
  solve(rates_, comp_res);
  if (observer_) report_loads(comp);
  schedule_next();
}

std::uint32_t FlowNetwork::next_visit() {
  return ++visit_;  // (settle() keeps it below 2^32: see there)
}

void FlowNetwork::clear_dirty_resources() {
  // (settle's first pass already cleared their flags)
  dirty_resources_.clear();
}

void FlowNetwork::set_rate(Class& c, double rate) {
  if (rerate(c, rate)) schedule_due(c);
}

bool FlowNetwork::rerate(Class& c, double rate) {
  const Picoseconds now = events_.now();
  if (rate == c.rate && c.since != now) return false;  // same rate: the scheduled completion stands
  if (now > c.since) c.remaining -= c.rate * (static_cast<double>(now - c.since) / 1e12);
  c.since = now;
  c.rate = rate;
  ++c.version;
  return true;
}

void FlowNetwork::schedule_due(const Class& c) {
  const Picoseconds now = events_.now();
  const double t = c.remaining <= 0 ? 0.0 : c.remaining / c.rate;
  if (!(t < kInf)) return;
  const double ps = std::max(std::ceil(t * 1e12 - 1e-6), 0.0);
  if (!(ps <= static_cast<double>(kMaxSimulatedTime - now))) {
    throw ValueError(
        "a transfer would end past the largest simulated time (2^62 ps, about 53 days): a size or "
        "bandwidth is outside the range commsim simulates");
  }
  add_due(now + static_cast<Picoseconds>(ps), static_cast<int>(&c - classes_.data()), c.version);
}

void FlowNetwork::drop_stale_dues() {
  const auto stale = [this](const Due& d) { return is_void(d); };
  for (auto it = due_.begin(); it != due_.end();) {
    Bucket& b = it->second;
    b.items.erase(b.items.begin(), b.items.begin() + static_cast<std::ptrdiff_t>(b.head));
    b.head = 0;
    const std::size_t before = b.items.size();
    b.items.erase(std::remove_if(b.items.begin(), b.items.end(), stale), b.items.end());
    due_count_ -= before - b.items.size();
    if (b.items.capacity() > kKeepScratch && b.items.capacity() > 4 * b.items.size()) b.items.shrink_to_fit();
    it = b.items.empty() ? erase_bucket(it) : std::next(it);
  }
}

void FlowNetwork::add_due(Picoseconds when, int cls, std::uint32_t version) {
  // Flows solved together mostly finish together: the last bucket is the likely one.
  if (!has_last_bucket_ || last_bucket_->first != when) {
    auto [it, fresh] = due_.try_emplace(when);
    if (fresh && !spare_buckets_.empty()) {
      it->second.items.swap(spare_buckets_.back());
      spare_buckets_.pop_back();
    }
    last_bucket_ = it;
    has_last_bucket_ = true;
  }
  last_bucket_->second.items.push_back({cls, version});
  ++due_count_;
}

FlowNetwork::Buckets::iterator FlowNetwork::erase_bucket(Buckets::iterator it) {
  if (has_last_bucket_ && last_bucket_ == it) has_last_bucket_ = false;
  Bucket& b = it->second;
  due_count_ -= b.items.size() - b.head;
  b.items.clear();
  if (b.items.capacity() <= kKeepScratch) spare_buckets_.push_back(std::move(b.items));  // a large one: freed
  return due_.erase(it);
}

/// What a saturating resource delivers (bytes/s) under an offered load of `demand` bytes/s: a smooth minimum
/// of the load and the capacity. Remembers its last answer: a broadcast's flows offer one resource the same
/// load one after another, and the two pow() calls were ~5% of a 16,384-GPU weight push.
double FlowNetwork::saturated_usable(Resource& res, double demand) {
  if (demand != res.sat_demand) {
    res.sat_usable = models::saturated_rate(demand, res.capacity, res.saturation);
    res.sat_demand = demand;
  }
  return res.sat_usable;
}

void FlowNetwork::solve(std::span<int> comp, const std::vector<ResourceId>& comp_res) {
  solved_classes_ += comp.size();
  if (comp.size() == 1 && comp_res.size() == classes_[comp.front()].path_len) {
    // One (weighted) flow alone on its resources, each crossed once: the first level of the water-filling
    // below, without its machinery.
    Class& c = classes_[comp.front()];
    const double w = c.weight;
    double level = c.cap > 0 ? c.cap : kInf;
    for (ResourceId r : c.route()) {
      Resource& res = resources_[r];
      const double usable = res.saturation > 0 && c.cap > 0 ? saturated_usable(res, w * c.cap) : res.capacity;
      level = std::min(level, usable / w);
    }
    if (level == kInf) throw Error("flow with unbounded rate");
    set_rate(c, level);
    return;
  }
  // Water-filling: raise all unfrozen flows together; freeze those stopped by their own cap or by a saturated
  // resource. Each round freezes every flow whose cap or some resource's fair share is within 1e-12 of the
  // round's level (as the whole-network solver did); the next level comes from a heap of fair shares.
  for (std::size_t i = 0; i < comp_res.size(); ++i) {
    if (fetch_ahead_ && i + 16 < comp_res.size()) {  // both lines, fetched ahead
      const Resource* ahead = &resources_[static_cast<std::size_t>(comp_res[i + 16])];
      __builtin_prefetch(ahead);
      __builtin_prefetch(reinterpret_cast<const char*>(ahead) + 64);
    }
    Resource& res = resources_[static_cast<std::size_t>(comp_res[i])];
    res.unfrozen = 0;
    res.initial = 0;  // offered load, first
  }
  std::vector<int>& caps = caps_;
  caps.clear();
  // Unfrozen classes of this component, a bit each (cleared as they freeze, so all clear after the solve):
  // the freezing below tests a resource's list against it without reading a class that froze before.
  std::uint64_t* const unfrozen = class_unfrozen_.data();
  const auto is_unfrozen = [unfrozen](int ci) {
    const auto ui = static_cast<std::size_t>(ci);
    return (unfrozen[ui / 64] >> (ui % 64) & 1) != 0;
  };
  for (std::size_t i = 0; i < comp.size(); ++i) {
    // A big component's classes and paths are scattered over tens of MB: fetched ahead, a few at a time.
    if (i + 16 < comp.size()) __builtin_prefetch(&classes_[comp[i + 16]]);
    if (i + 8 < comp.size()) __builtin_prefetch(classes_[comp[i + 8]].path);
    const int ci = comp[i];
    Class& c = classes_[ci];
    const auto ui = static_cast<std::size_t>(ci);
    unfrozen[ui / 64] |= std::uint64_t{1} << (ui % 64);
    const double w = c.weight;
    for (ResourceId r : c.route()) {
      Resource& res = resources_[r];
      res.unfrozen += c.weight;
      res.initial += c.cap > 0 ? w * c.cap : kInf;
    }
    if (c.cap > 0) caps.push_back(ci);
  }
  // Caps as a min-heap by (cap, slot): only those that freeze a flow are popped.
  const auto cap_later = [&](int a, int b) {
    const double ca = classes_[a].cap, cb = classes_[b].cap;
    return ca != cb ? ca > cb : a > b;
  };
  std::make_heap(caps.begin(), caps.end(), cap_later);
  std::vector<Share>& heap = shares_;
  heap.clear();
  for (ResourceId r : comp_res) {
    Resource& res = resources_[r];
    const double demand = res.initial;
    res.residual = res.capacity;
    if (res.saturation > 0 && demand < kInf) {
      res.residual = saturated_usable(res, demand);
    }
    res.initial = res.residual;
    if (res.unfrozen > 0) {
      heap.push_back({res.residual / static_cast<double>(res.unfrozen), r, ++res.version});
    }
  }
  std::make_heap(heap.begin(), heap.end(), std::greater<>());
  auto valid = [&](const Share& s) {
    const Resource& res = resources_[s.resource];
    return s.version == res.version && res.unfrozen > 0;
  };
  std::size_t pending = comp.size();
  std::vector<ResourceId>& touched = stack_;  // free during a solve
  // Rates are applied after filling: the classes in freezing order, each round's level and where its classes
  // end (levels_). The order is written over `comp`, which is not read again (every class of it freezes
  // once): no second list of a million classes.
  std::size_t nrates = 0;
  std::vector<std::pair<std::size_t, double>>& levels = levels_;
  levels.clear();
  auto pop_cap = [&] {
    std::pop_heap(caps.begin(), caps.end(), cap_later);
    caps.pop_back();
  };
  while (pending > 0) {
    while (!heap.empty() && !valid(heap.front())) {
      std::pop_heap(heap.begin(), heap.end(), std::greater<>());
      heap.pop_back();
    }
    while (!caps.empty() && !is_unfrozen(caps.front())) pop_cap();
    double level = heap.empty() ? kInf : heap.front().share;
    if (!caps.empty()) level = std::min(level, classes_[caps.front()].cap);
    if (level == kInf) throw Error("flow with unbounded rate");
    const double limit = level * (1 + 1e-12);
    const std::size_t round_start = nrates;  // this round's frozen classes: comp[round_start..nrates)
    // Only classes of the component have a bit: ended classes still in a resource's list never freeze.
    auto freeze = [&](int ci) {
      const auto ui = static_cast<std::size_t>(ci);
      const std::uint64_t bit = std::uint64_t{1} << (ui % 64);
      if ((unfrozen[ui / 64] & bit) == 0) return;
      // (A network whose solve threw is not solved again: its flows would throw again. Still, no write past
      // the component.)
      if (nrates == comp.size()) throw Error("water-filling froze a flow outside its component");
      unfrozen[ui / 64] &= ~bit;
      comp[nrates++] = ci;
    };
    while (!heap.empty() && heap.front().share <= limit) {
      const Share s = heap.front();
      std::pop_heap(heap.begin(), heap.end(), std::greater<>());
      heap.pop_back();
      if (!valid(s)) continue;
      Resource& res = resources_[s.resource];
      ++res.version;
      for (const int ci : res.classes) freeze(ci);
    }
    while (!caps.empty() && classes_[caps.front()].cap <= limit) {
      freeze(caps.front());
      pop_cap();
    }
    if (nrates == round_start) throw Error("water-filling made no progress");
    levels.emplace_back(nrates, level);
    const std::span<const int> frozen = comp.subspan(round_start, nrates - round_start);
    // The resources the round's classes cross, in order of first touch: each gets one new share below.
    const std::uint32_t round = next_visit();
    touched.clear();
    for (std::size_t i = 0; i < frozen.size(); ++i) {
      if (i + 16 < frozen.size()) __builtin_prefetch(&classes_[frozen[i + 16]]);
      if (i + 8 < frozen.size()) __builtin_prefetch(classes_[frozen[i + 8]].path);
      // Both lines (the stamp; residual, unfrozen) of the resources of the class 4 on.
      if (fetch_ahead_ && i + 4 < frozen.size()) {
        fetch_route(resources_, classes_[frozen[i + 4]].route(), true);
      }
      const Class& c = classes_[frozen[i]];
      const double w = c.weight;
      for (ResourceId r : c.route()) {
        Resource& res = resources_[r];
        res.residual = std::max(0.0, res.residual - w * level);
        res.unfrozen -= c.weight;
        if (res.visit != round) {
          res.visit = round;
          touched.push_back(r);
        }
      }
    }
    for (ResourceId r : touched) {
      Resource& res = resources_[r];
      if (res.unfrozen > 0) {
        heap.push_back({res.residual / static_cast<double>(res.unfrozen), r, ++res.version});
        std::push_heap(heap.begin(), heap.end(), std::greater<>());
      }
    }
    pending -= frozen.size();
  }
  touched.clear();  // the component search's stack again
  std::size_t from = 0;
  if (comp.size() <= kKeepScratch || 2 * comp.size() < due_count_) {
    for (const auto& [end, level] : levels) {
      for (; from < end; ++from) set_rate(classes_[comp[from]], level);
    }
    return;
  }
  // A huge component with most of the scheduled completions (the sweep below costs at most twice the
  // component): the new rates first (`frozen` marks the classes whose completion stands), then the
  // completions they void are dropped, then the new completions are added, in the same order as above. Else
  // the million stale entries of the old instant and the million new ones are held at once.
  for (const auto& [end, level] : levels) {
    for (; from < end; ++from) {
      Class& c = classes_[comp[from]];
      c.frozen = !rerate(c, level);
    }
  }
  drop_stale_dues();
  for (const int ci : comp) {
    if (!classes_[ci].frozen) schedule_due(classes_[ci]);
  }
}

void FlowNetwork::report_loads(const std::vector<int>& comp) {
  // Loads in first-touch order (flows in start order), then the resources that lost their last flow.
  std::vector<ResourceId> touched;
  const std::uint32_t visit = next_visit();
  for (int ci : comp) {
    for (ResourceId r : classes_[ci].route()) {
      if (resources_[r].visit != visit) {
        resources_[r].visit = visit;
        touched.push_back(r);
      }
    }
  }
  for (ResourceId r : touched) {
    Resource& res = resources_[r];
    const double load = res.initial - res.residual;
    if (std::fabs(load - res.load) > 1e-6 * res.capacity) observer_(events_.now(), r, load);
    res.load = load;
  }
  for (ResourceId r : loaded_) {
    Resource& res = resources_[r];
    if (res.visit != visit) {
      res.load = 0;
      observer_(events_.now(), r, 0.0);
    }
  }
  loaded_.swap(touched);
}

void FlowNetwork::schedule_next() {
  ++generation_;
  // Stale entries accumulate while rates change; drop them all once they dominate.
  if (due_count_ > 2 * active_classes_ + 1024) drop_stale_dues();
  // The earliest instant with a live completion.
  while (!due_.empty()) {
    Bucket& b = due_.begin()->second;
    while (b.head < b.items.size() && is_void(b.items[b.head])) {
      ++b.head;
      --due_count_;
    }
    if (b.head < b.items.size()) break;
    erase_bucket(due_.begin());
  }
  if (due_.empty()) return;
  const std::uint64_t gen = generation_;
  events_.at(std::max(due_.begin()->first, events_.now()), [this, gen] { on_completion(gen); });
}

void FlowNetwork::on_completion(std::uint64_t generation) {
  if (generation != generation_) return;  // rates changed since this was scheduled
  const Picoseconds now = events_.now();
  // Done when less than a picosecond of transfer is left (the completion time was rounded up). Instants in
  // time order, each instant's flows by slot.
  std::vector<int>& finished = finished_;
  std::vector<Due>& later = later_;
  finished.clear();
  for (auto it = due_.begin(); it != due_.end() && it->first <= now + 2;) {
    const Picoseconds when = it->first;
    Bucket& b = it->second;
    auto by_slot = [](const Due& x, const Due& y) { return x.cls < y.cls; };
    if (!std::is_sorted(b.items.begin() + static_cast<std::ptrdiff_t>(b.head), b.items.end(), by_slot)) {
      b.items.erase(b.items.begin(), b.items.begin() + static_cast<std::ptrdiff_t>(b.head));
      b.head = 0;
      sort_by_key(b.items, later, [](const Due& d) { return static_cast<std::uint64_t>(d.cls); });
    }
    const auto first = b.items.begin() + static_cast<std::ptrdiff_t>(b.head);
    later.clear();
    for (auto d = first; d != b.items.end(); ++d) {
      if (fetch_ahead_ && b.items.end() - d > 8)
        __builtin_prefetch(&classes_[static_cast<std::size_t>(d[8].cls)]);
      if (is_void(*d)) continue;
      const Class& c = classes_[d->cls];
      const double left = c.remaining - c.rate * (static_cast<double>(now - c.since) / 1e12);
      if (when <= now || left <= c.rate * 1e-12 + 1e-9) {
        finished.push_back(d->cls);
      } else {
        later.push_back(*d);
      }
    }
    if (later.empty()) {
      it = erase_bucket(it);
    } else {
      due_count_ -= b.items.size() - b.head - later.size();
      b.items.assign(later.begin(), later.end());
      b.head = 0;
      ++it;
    }
  }
  std::vector<FlowId> done;
  done.swap(done_);  // callbacks may end flows re-entrantly: this instant keeps its own list
  done.clear();
  {
    std::size_t ending = 0;
    for (int ci : finished) ending += classes_[ci].weight;
    done.reserve(ending);
  }
  for (std::size_t i = 0; i < finished.size(); ++i) {
    // Fetched ahead: the classes 16 on, the resources and last member of the class 8 on (its line fetched 8
    // classes ago).
    if (fetch_ahead_ && i + 16 < finished.size())
      __builtin_prefetch(&classes_[static_cast<std::size_t>(finished[i + 16])]);
    if (fetch_ahead_ && i + 8 < finished.size()) {
      const Class& ahead = classes_[static_cast<std::size_t>(finished[i + 8])];
      fetch_route(resources_, ahead.route());
      if (ahead.tail >= 0) __builtin_prefetch(&members_[static_cast<std::size_t>(ahead.tail)]);
    }
    const int ci = finished[i];
    Class& c = classes_[ci];
    c.active = false;
    c.remaining = 0;
    --active_classes_;
    active_members_ -= c.weight;
    for (ResourceId r : c.route()) {
      Resource& res = resources_[r];
      ++res.dead;
      // Once: a link that a million ending flows cross is listed once, not a million times.
      std::uint64_t& word = dirty_bits_[static_cast<std::size_t>(r) / 64];
      const std::uint64_t bit = std::uint64_t{1} << (static_cast<std::size_t>(r) % 64);
      if ((word & bit) == 0) {
        word |= bit;
        dirty_resources_.push_back(r);
      }
    }
    for (int m = head_of(c), first = m; m >= 0;) {
      done.push_back(m);
      m = members_[m].next;
      if (m == first) break;
    }
    // The slot waits until the resource lists have dropped it (settle), unless no list names it.
    c.weight = c.path_len;
    if (c.weight == 0) free_class(ci);
  }
  release_if_large(finished_);  // before the callbacks: a million ended classes' list is not needed again
  mark_stale();
  const auto seq_of = [&](FlowId m) { return members_[m].seq; };
  if (!std::is_sorted(done.begin(), done.end(), [&](FlowId a, FlowId b) { return seq_of(a) < seq_of(b); })) {
    sort_by_key(done, done_scratch_, seq_of);
  }
  for (const FlowId id : done) {
    const Tag tag = members_[id].tag;
    members_[id].next = free_member_;  // freed slots form a stack through `next`, reused last-freed first
    free_member_ = id;
    if (tag & kDoneTag) {
      const auto at = static_cast<std::uint32_t>(tag & ~kDoneTag);
      Done d = std::move(dones_[at]);
      dones_[at] = nullptr;
      free_dones_.push_back(at);
      if (d) d();
    } else {
      tag_handler_(tag);
    }
  }
  done.clear();
  if (done.capacity() > done_.capacity()) done.swap(done_);
  // The scratch of a big instant (a million flows that end together: tens of MB) is freed, not kept for
  // instants that do not need it; a small one is kept for reuse.
  release_if_large(done_);
  release_if_large(done_scratch_);
  release_if_large(finished_);
  release_if_large(later_);
}

}  // namespace commsim::sim
