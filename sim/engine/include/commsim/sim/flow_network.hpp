// Flow-level bandwidth sharing: flows on paths of directed resources, max-min fair with per-flow rate caps.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "commsim/core/units.hpp"
#include "commsim/sim/event_queue.hpp"

namespace commsim::sim {

/// Resources (directed links, or virtual limits such as a GPU's host-memory copy rate) with a capacity in
/// bytes/s, and flows that each cross a list of resources. Rates are the max-min fair allocation subject to
/// each flow's own cap; they are recomputed once per instant at which flows start or end. Completion events
/// go on the shared EventQueue; a completion that a rate change made stale is ignored.
///
/// The work per change is proportional to what changes:
/// - Incremental: a max-min fair allocation splits into independent problems, one per connected component
///   of the graph of flows and the resources they share. A start or an end re-solves only the component(s)
///   it touches; every other flow keeps its rate, its bytes and its scheduled completion.
/// - Coalescing: flows started at the same instant on the same path (the same route object, see start_on)
///   with the same cap and the same bytes are one weighted flow. Max-min fairness gives identical flows
///   identical rates, so they also end together; each keeps its own id and completion callback, and
///   callbacks still run in start order.
/// - Water-filling visits each flow and each resource once per solve (a heap of resource fair shares),
///   instead of once per distinct rate level.
/// flow_network_equivalence_test.cpp checks it against the whole-network solver it replaced.
class FlowNetwork {
 public:
  using ResourceId = int;
  using FlowId = int;
  using Done = std::function<void()>;
  /// A flow's name for the tag handler (start_tagged): below 2^63.
  using Tag = std::uint64_t;
  /// Runs when a flow started with start_tagged completes, with its tag. A million flows in flight then keep
  /// 8 bytes each for their callback instead of a std::function's 32.
  using TagHandler = std::function<void(Tag)>;
  /// Called after every rate recomputation with the resources whose load changed (for traces). While an
  /// observer is set, every recomputation solves the whole network, as the loads of every resource are
  /// reported in a fixed order.
  using LoadObserver = std::function<void(Picoseconds now, ResourceId r, double load_bytes_per_s)>;

  explicit FlowNetwork(EventQueue& events) : events_(events) {}

  /// `saturation` 0 makes the capacity a hard limit. A positive k makes the resource deliver less than its
  /// capacity as the offered load D (the sum of its flows' caps) approaches it: the usable capacity is
  /// D / (1 + (D/C)^k)^(1/k), a smooth minimum of D and C that tends to the hard one as k grows.
  ResourceId add_resource(double capacity, std::string name, double saturation = 0);
  double capacity(ResourceId r) const { return resources_[r].capacity; }
  /// Its name; empty for a resource added without one.
  const std::string& resource_name(ResourceId r) const {
    static const std::string kNone;
    const auto it = names_.find(r);
    return it == names_.end() ? kNone : it->second;
  }
  /// Room for `n` resources in all: a caller that knows how many it adds spares the array's regrowth (a
  /// 16,384-GPU cluster has ~200,000).
  void reserve_resources(std::size_t n) { resources_.reserve(n); }
  std::size_t resource_count() const { return resources_.size(); }

  /// Starts a flow of `bytes` over `path` now; `cap` limits its rate (0 = no own limit). `done` runs when the
  /// last byte has arrived. A flow with no resources and no cap completes at once. The id names the flow
  /// until it completes; a later flow may reuse it.
  FlowId start(std::vector<ResourceId> path, double bytes, double cap, Done done);
  /// The same, for a path the caller keeps alive (and unchanged) until the flow completes: no copy. The
  /// simulator's routes live as long as the runtime, so its many flows share them, and flows started at
  /// the same instant on the same route object with equal cap and bytes are coalesced.
  FlowId start_on(const std::vector<ResourceId>& path, double bytes, double cap, Done done) {
    return start_flow(path, &path, bytes, cap, 0, &done);
  }
  /// The same for a path the caller keeps elsewhere (an arena of routes): coalescing compares the path's
  /// address and length.
  FlowId start_on(std::span<const ResourceId> path, double bytes, double cap, Done done) {
    return start_flow(path, path.data(), bytes, cap, 0, &done);
  }
  /// The same, calling the tag handler with `tag` (< 2^63) when it completes instead of a callback of its
  /// own.
  FlowId start_tagged(std::span<const ResourceId> path, double bytes, double cap, Tag tag);
  void set_tag_handler(TagHandler handler) { tag_handler_ = std::move(handler); }
  /// A hint, changing nothing: a flow of `bytes` with `cap` will soon start on `path`, so the memory its
  /// start touches is fetched now. A caller starting many flows in a row calls it for a later one (on a large
  /// cluster each of a path's resources is a cache miss; on a small network it returns at once).
  void prefetch(std::span<const ResourceId> path, double bytes, double cap) const;

  /// The flow's current rate in bytes/s (settles pending starts first).
  double rate(FlowId f);
  /// Flows started and not yet completed (a coalesced group counts each of its flows).
  std::size_t active_flows() const { return active_members_; }
  /// Rate recomputations (one per instant at which flows started or ended).
  std::uint64_t recomputations() const { return recomputations_; }
  /// Weighted flows solved, summed over all recomputations (the work the incremental solver did).
  std::uint64_t solved_flows() const { return solved_classes_; }
  /// Weighted flows ever created: flows after coalescing.
  std::uint64_t coalesced_flows() const { return created_classes_; }
  void set_load_observer(LoadObserver obs) { observer_ = std::move(obs); }

  /// Memory one network hands to the next, every vector empty: the flow lists of its resources (by
  /// resource id) and the solver's and completions' arrays. A runtime that runs program after program
  /// passes it on instead of growing the same arrays again each run; nothing in it is state.
  struct Storage;
  /// Empties the network's arrays into a Storage (the network must not be used after).
  Storage release_storage();
  /// Takes the capacity of `s`'s (empty) arrays where this network's are still empty: after its resources are
  /// added, before any flow. Results are those of a new network.
  void adopt_storage(Storage&& s);

 private:
  /// Two cache lines, aligned: the first holds what the component search, a flow's start and end, and a lone
  /// flow's solve read (a prefetch of the resource fetches all of it); the second the water-filling's
  /// scratch. Names live apart (names_), and so do the dirty marks (dirty_bits_).
  struct alignas(64) Resource {
    /// Weighted flows crossing it (class slots). Entries of ended classes are dropped lazily; an ended
    /// class's slot is not reused until every list has dropped it, so an entry names one class only.
    std::vector<int> classes;
    std::uint32_t visit = 0;  ///< scratch: search stamp (next_visit)
    int dead = 0;             ///< ended entries still in `classes`
    double capacity = 0;
    double saturation = 0;
    double sat_demand = -1;  ///< the last offered load (bytes/s) saturated_usable() was asked for
    double sat_usable = 0;   ///< and its answer (bytes/s)
    // (second line)
    double residual = 0;        ///< scratch for water-filling
    std::int64_t unfrozen = 0;  ///< scratch: weight of unfrozen flows
    double initial = 0;         ///< scratch: usable capacity before filling
    double load = 0;            ///< sum of rates of active flows (kept while an observer is set)
    std::uint32_t version = 0;  ///< scratch: heap entry validity
    bool in_loaded = false;     ///< in loaded_ (observer mode)
  };
  static_assert(sizeof(Resource) == 128);
  /// A weighted flow: `weight` identical flows that started together. 56 bytes: an all-to-all over 1,024
  /// GPUs keeps a million of them.
  struct Class {
    // What the component search reads first, together.
    const ResourceId* path = nullptr;  ///< in owned_paths_, or a caller's path (start_on)
    std::uint32_t path_len : 30 = 0;
    std::uint32_t active : 1 = 0;
    std::uint32_t frozen : 1 = 0;  ///< scratch of a huge solve: its completion stands
    /// Active: the identical flows it stands for. Ended: its entries still in resource lists; the slot is
    /// freed when that reaches 0.
    std::uint32_t weight = 0;
    std::uint32_t version = 0;  ///< completion entry validity
    /// Its last member; members form a ring in start order (the last's next is the first, whose seq is the
    /// class's start order).
    int tail = -1;
    double cap = 0;
    double remaining = 0;  ///< bytes each member still has to move at time `since`
    double rate = 0;       ///< bytes/s of each member
    Picoseconds since = 0;
    std::span<const ResourceId> route() const { return {path, path_len}; }
  };
  static_assert(sizeof(Class) <= 56);
  /// The first member of a class, -1 for none.
  int head_of(const Class& c) const { return c.tail < 0 ? -1 : members_[c.tail].next; }
  struct Member {  ///< 24 bytes
    int cls = -1;
    int next = -1;  ///< the next member of its class (the ring closes at the class's last member); when free,
                    ///< the next free slot
    std::uint64_t seq = 0;
    Tag tag = 0;
  };
  /// A scheduled completion. Completions are kept in buckets, one per instant (many flows end together, and a
  /// heap of all of them was the hottest memory of a run); an instant's entries pop by slot, and flows that
  /// end at one instant are sorted by start order before their callbacks run.
  struct Due {
    int cls;
    std::uint32_t version;
  };
  struct Bucket {
    std::vector<Due> items;  ///< in insertion order; sorted by slot when the instant comes
    std::size_t head = 0;    ///< items before it are stale and dropped
  };
  using Buckets = std::map<Picoseconds, Bucket>;

  /// `key` names the path for coalescing (flows on the same key, cap and bytes at one instant join).
  /// Completes with `*done` if given (kept in dones_, the member's tag kDoneTag | its index), else by calling
  /// the tag handler with `tag`.
  FlowId start_flow(std::span<const ResourceId> path, const void* key, double bytes, double cap, Tag tag,
                    Done* done);
  static constexpr Tag kDoneTag = Tag{1} << 63;
  Tag done_tag(Done done);
  std::vector<Done> dones_;  ///< callbacks of flows started with one (start, start_on)
  std::vector<std::uint32_t> free_dones_;
  TagHandler tag_handler_;
  int new_class();
  /// Where a flow's start looks for an identical class started at this instant (a hash of the path's ends
  /// and length, its cap and bytes).
  static std::size_t recent_slot(std::span<const ResourceId> path, double cap, double bytes);
  double saturated_usable(Resource& res, double demand);
  /// Water-filling of one component (`classes`, whose order it overwrites with the freezing order).
  void solve(std::span<int> classes, const std::vector<ResourceId>& resources);
  void report_loads(const std::vector<int>& classes);
  void schedule_next();  ///< the earliest completion, tagged with the current generation
  void on_completion(std::uint64_t generation);
  void set_rate(Class& c, double rate);
  /// set_rate in two steps: the new rate (true if it changed the scheduled completion), then that completion.
  bool rerate(Class& c, double rate);
  void schedule_due(const Class& c);
  /// Drops the completion entries voided since (ended flows, changed rates).
  void drop_stale_dues();
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
  std::unordered_map<ResourceId, std::string> names_;  ///< the resources added with a name
  std::vector<Class> classes_;
  /// Free class slots as a two-level bitmap (bit set = free), popped lowest first.
  std::vector<std::uint64_t> free_bits_, free_summary_;
  std::size_t free_count_ = 0;
  std::size_t free_low_ = 0;  ///< no summary word below it has a bit set
  void free_class(int cls);
  int pop_free_class();
  std::vector<Member> members_;
  /// Free member slots: a stack threaded through Member::next (-1: none). A list of its own was 4 bytes a
  /// flow more at the instant a million flows end.
  FlowId free_member_ = -1;
  std::size_t active_members_ = 0;
  std::size_t active_classes_ = 0;
  std::vector<int> dirty_classes_;  ///< started (or grown) since the last solve
  std::vector<ResourceId>
      dirty_resources_;  ///< lost a flow since the last solve, each once (in order of loss)
  void clear_dirty_resources();

  /// Recently started classes, direct-mapped by a hash of the path's contents, cap and bytes (deterministic:
  /// not the path's address): a start joins the class in its slot if that one started at this instant with
  /// the same path object, cap and bytes. A collision only misses a coalescing.
  struct Recent {
    const void* path = nullptr;
    std::size_t len = 0;
    double cap = 0, bytes = 0;
    Picoseconds time = -1;
    int cls = -1;
    std::uint32_t epoch = 0;  ///< the network that wrote it (recent_epoch_); 0 never matches
  };
  static constexpr std::size_t kRecent = 4096;
  std::vector<Recent> recent_;  ///< kRecent slots, made at the first start or adopted from the last run
  std::uint32_t recent_epoch_ = 1;
  /// A resource's fair share for the water-filling heap (smallest first).
  struct Share {
    double share;
    int resource;
    std::uint32_t version;
    bool operator>(const Share& o) const { return share > o.share; }
  };
  // Scratch, reused by every solve (no allocation per instant).
  std::vector<int> comp_, finished_;
  std::vector<ResourceId> comp_res_, stack_;
  std::vector<int> caps_;  ///< capped classes, a min-heap by (cap, slot)
  std::vector<Share> shares_;
  std::vector<int> rates_;  ///< observer mode: the classes solve() reorders
  /// Per round: where its classes end in the freezing order, and its level.
  std::vector<std::pair<std::size_t, double>> levels_;
  std::vector<Due> later_;
  /// Entries of completion scratch (done_, finished_, later_, a bucket) kept for reuse after an instant;
  /// larger vectors are freed.
  static constexpr std::size_t kKeepScratch = std::size_t{1} << 16;
  template <typename T>
  static void release_if_large(std::vector<T>& v) {
    if (v.capacity() > kKeepScratch) std::vector<T>().swap(v);
  }
  std::vector<std::vector<Due>> spare_buckets_;  ///< emptied bucket vectors, reused
  std::vector<FlowId> done_;          ///< an instant's ended flows, run in start order (members' seq)
  std::vector<FlowId> done_scratch_;  ///< for sorting them
  Buckets due_;                       ///< completions by instant (stale entries skipped)
  std::size_t due_count_ = 0;         ///< entries in due_, stale ones included
  Buckets::iterator last_bucket_{};   ///< where the last completion went (valid if has_last_bucket_)
  bool has_last_bucket_ = false;
  void add_due(Picoseconds when, int cls, std::uint32_t version);
  /// A completion entry voided since it was added: its flow ended or its rate changed.
  bool is_void(const Due& d) const {
    const Class& c = classes_[d.cls];
    return !c.active || c.version != d.version;
  }
  Buckets::iterator erase_bucket(Buckets::iterator it);
  void release_solver_scratch();
  std::vector<ResourceId> loaded_;  ///< resources with load after the last recomputation (observer mode)
  std::uint64_t next_seq_ = 0;
  std::uint32_t visit_ = 0;
  /// More resources than a core's caches hold comfortably (over kFetchAhead): loops over scattered memory
  /// fetch ahead what a later iteration reads. Below it the prefetches only cost instructions.
  bool fetch_ahead_ = false;
  static constexpr std::size_t kFetchAhead = 2048;
  /// A new search stamp (Resource::visit); settle() restarts them between searches, long before they run out.
  std::uint32_t next_visit();
  /// Resources marked dirty since the last settle, a bit each (by resource id): every set bit is in
  /// dirty_resources_ (settle's first pass clears them, before that list is cleared).
  std::vector<std::uint64_t> dirty_bits_;
  /// Classes the component search of one settle has reached (bit per slot), cleared at the settle's end (a
  /// dirty class already solved in an earlier component is skipped). A bitmap, not a stamp in each class: 4
  /// bytes a class less (a million in a 1,024-GPU all-to-all).
  std::vector<std::uint64_t> class_seen_;
  /// Scratch of solve(): the classes of the component being solved not yet frozen (bit per slot; all clear
  /// between solves).
  std::vector<std::uint64_t> class_unfrozen_;
  std::uint64_t generation_ = 0;
  std::uint64_t recomputations_ = 0;
  std::uint64_t solved_classes_ = 0;
  std::uint64_t created_classes_ = 0;
  LoadObserver observer_;

 public:
  struct Storage {
    std::vector<std::vector<int>> class_lists;      ///< by resource id
    std::vector<std::vector<int>> ints;             ///< int_arrays(), in its order
    std::vector<std::vector<std::uint64_t>> words;  ///< word_arrays(), in its order
    std::vector<Class> classes;
    std::vector<Member> members;
    std::vector<Share> shares;
    std::vector<std::pair<std::size_t, double>> levels;
    std::vector<Due> later;
    std::vector<std::vector<Due>> spare_buckets;
    std::vector<Recent> recent;
    std::uint32_t recent_epoch = 0;
    /// The memory it holds (bytes of its arrays' capacity).
    std::size_t bytes() const;
  };

 private:
  /// The arrays of ints a Storage carries (ResourceId and FlowId are int).
  std::array<std::vector<int>*, 11> int_arrays() {
    return {&comp_,          &finished_,        &comp_res_, &stack_,        &caps_,  &rates_,
            &dirty_classes_, &dirty_resources_, &done_,     &done_scratch_, &loaded_};
  }
  /// The bitmaps a Storage carries.
  std::array<std::vector<std::uint64_t>*, 4> word_arrays() {
    return {&free_bits_, &free_summary_, &class_seen_, &class_unfrozen_};
  }
};

}  // namespace commsim::sim
