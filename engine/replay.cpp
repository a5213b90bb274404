#include "engine/replay.h"

#include <fmt/format.h>

#include <algorithm>

#include "model/cuda_errors.h"
#include "rules/rehearsal.h"
#include "rules/rule.h"
#include "symbolize/modules.h"

namespace capguard {

using trace::ApiEvent;

namespace {

// Only these can interest a rule: failures, killed captures, and calls made while a capture
// is open on this thread (escapes) or anywhere (unsafe calls from other threads).
bool worth_checking(const Call& call, const CaptureModel& model) {
  return call.result() != 0 || !call.victims.empty() || call.own_capture || call.found_over ||
         (call.api.kind == ApiKind::Unsafe && !model.open_captures().empty());
}

// Capture ids run on across the processes of a report; a counted entry used ids up to last_id.
uint32_t next_capture_id(const Report& report) {
  uint32_t last = 0;
  for (const CaptureInfo& c : report.captures) last = std::max({last, c.id, c.last_id});
  return last + 1;
}

}  // namespace

Replay::Replay(Report& report, uint32_t pid)
    : report_(report),
      pid_(pid),
      model_(next_capture_id(report)),
      first_capture_index_(report.captures.size()) {
  graphs_.set_site_key(
      [](const void* self, uint32_t stack) {
        return static_cast<const Replay*>(self)->canonical_stack(stack);
      },
      this);
}

void Replay::define_stack(uint32_t id, std::span<const uint64_t> addresses) {
  StackSpan& span = stacks_[id];
  if (span.size == addresses.size() && span.size != 0 &&
      std::equal(addresses.begin(), addresses.end(), stack_pool_.begin() + span.offset))
    return;
  span.offset = static_cast<uint32_t>(stack_pool_.size());
  span.size = static_cast<uint32_t>(addresses.size());
  stack_pool_.insert(stack_pool_.end(), addresses.begin(), addresses.end());
  // Where a stack has Python frames, they alone say where it was called from: the native
  // frames of the interpreter between them vary with CPython's specialization of the call.
  const auto python = [](uint64_t a) { return (a & kPythonFrameTag) == kPythonFrameTag; };
  const bool has_python = std::any_of(addresses.begin(), addresses.end(), python);
  const auto counted = [&](uint64_t a) { return !has_python || python(a); };
  uint64_t hash = has_python ? 1 : 0;
  for (uint64_t a : addresses)
    if (counted(a)) hash = mix_hash(hash ^ a);
  uint32_t& first = stack_by_content_[hash];
  if (first == 0) first = id;
  const StackSpan* other = first != id ? stacks_.find(first) : nullptr;
  bool same = other != nullptr;
  if (same) {  // the same content, not a hash collision: compare the counted entries in place
    const uint64_t* a = addresses.data();
    const uint64_t* b = stack_pool_.data() + other->offset;
    const uint64_t* const a_end = a + addresses.size();
    const uint64_t* const b_end = b + other->size;
    for (;; ++a, ++b) {
      while (a != a_end && !counted(*a)) ++a;
      while (b != b_end && !counted(*b)) ++b;
      if (a == a_end || b == b_end || *a != *b) break;
    }
    same = a == a_end && b == b_end;
  }
  canonical_stacks_[id] = same ? first : id;
}

uint32_t Replay::canonical_stack(uint32_t id) const {
  const uint32_t* canonical = canonical_stacks_.find(id);
  return canonical != nullptr ? *canonical : id;
}

const Replay::ApiCacheEntry& Replay::classify_new(std::string_view api) {
  ApiCacheEntry& fresh = api_cache_[reinterpret_cast<uintptr_t>(api.data())];
  fresh.name = api;
  fresh.info = classify_api(api);
  fresh.graph_op = graph_op(fresh.info);
  fresh.succeeded_rules = rules::call_rules(false, fresh.info.kind);
  return fresh;
}

const ApiInfo& Replay::classify(std::string_view api) { return classify_entry(api).info; }

void Replay::note_other_thread_call(const ApiEvent& ev) {
  size_t oldest = 0;
  for (size_t i = 0; i < thread_calls_.size(); ++i) {
    if (thread_calls_[i].tid == ev.tid) {
      thread_calls_[i] = Site::of(ev);
      last_thread_call_ = i;
      return;
    }
    if (thread_calls_[i].seq < thread_calls_[oldest].seq) oldest = i;
  }
  if (thread_calls_.size() < kThreadsRemembered) {
    oldest = thread_calls_.size();
    thread_calls_.emplace_back();
  }
  thread_calls_[oldest] = Site::of(ev);
  last_thread_call_ = oldest;
}

const Site* Replay::started_by(const Site& where) const {
  if (where.tid == pid_) return nullptr;  // the main thread started its own work
  const Site* latest = nullptr;
  for (const Site& site : thread_calls_)
    if (site.tid != where.tid && site.seq < where.seq && (!latest || site.seq > latest->seq))
      latest = &site;
  return latest;
}

void Replay::feed_rest(const ApiEvent& ev, const ApiCacheEntry& entry) {
  const ApiInfo& api = entry.info;
  // The error these return is the earlier call's, already judged there: not a failure of theirs.
  if (api.kind == ApiKind::ErrorReport) return;
  // Graph lifetime: allocations, frees, launches, syncs, sticky errors (graph_lifetime.h).
  if (GraphLifetime::wants(ev, api, entry.graph_op)) {
    graphs_.feed(ev, api, entry.graph_op, model_);
    emit_graph_facts();
    if (ev.result == 0 && ev.has(trace::Field::GraphExec)) {
      if (api.kind == ApiKind::GraphInstantiate) {
        collectives_.on_instantiate(ev.graph_exec);
      } else if (api.kind == ApiKind::GraphLaunch && model_.stream_capture(ev, api) == nullptr) {
        const uint64_t stream = ev.has(trace::Field::Stream) ? ev.stream : 0;
        collectives_.on_launch(ev.graph_exec,
                               api.per_thread && stream == 0 ? trace::kStreamPerThread : stream,
                               ev.seq);
      }
    }
  }
  if (model_.irrelevant(ev, api)) {
    if (!rehearsal_.active()) return;
    model_.prepare(ev, api, call_);  // the rehearsal reads the prepared call; nothing to apply
    return rehearse(ev);
  }
  // Most calls during a capture: a launch that only counts (the rehearsal reads every call).
  if (!rehearsal_.active() && model_.count_work(ev, api)) {
    if (model_.retirement_due()) retire(model_.retire_ended());
    return;
  }
  model_.prepare(ev, api, call_);
  if (rehearsal_.active()) rehearse(ev);
  if (api.kind == ApiKind::EndCapture && call_.stream_capture != nullptr)
    graphs_.on_end_capture(ev, *call_.stream_capture);

  if (Capture* dead = call_.consequence_of) {
    ++report_.findings[*dead->root_cause].consequences;
    model_.apply(call_, std::nullopt);
    return;
  }
  bool orphan_901 = ev.result == kErrCaptureInvalidated && call_.victims.empty();
  if (orphan_901 && orphan_root_) {
    ++report_.findings[*orphan_root_].consequences;
    model_.apply(call_, std::nullopt);
    return;
  }

  std::optional<size_t> finding;
  if (worth_checking(call_, model_)) {
    rules::Draft draft;  // one for all rules: this runs for every call made during a capture
    const bool failed = call_.result() != 0 || !call_.victims.empty();
    for (const rules::Rule* rule :
         failed ? rules::call_rules(true, api.kind) : entry.succeeded_rules) {
      if (!rule->on_call(call_, model_, draft)) {
        if (!draft.empty()) draft = rules::Draft{};  // a rule that wrote, then declined
        continue;
      }
      finding = emit(*rule, draft, &ev, &api, Site::of(ev));
      break;
    }
  }
  if (orphan_901 && finding) orphan_root_ = finding;
  model_.apply(call_, finding);
  if (model_.retirement_due()) retire(model_.retire_ended());
}

size_t Replay::emit(const rules::Rule& rule, rules::Draft& draft, const ApiEvent* ev,
                    const ApiInfo* api, const Site& where) {
  Finding f;
  const RuleInfo info = rule.info();
  f.rule = std::string(info.id);
  f.severity = info.severity;
  f.message = std::move(draft.message);
  f.pid = pid_;
  f.process = process_;
  f.thread = where.tid;
  f.api = std::string(where.api);
  if (ev) {
    trace::ApiDomain domain = ev->has(trace::Field::Domain) ? ev->domain : api->domain;
    f.result = ev->result;
    f.result_name = result_name(ev->result, domain);
  } else {
    f.result_name = result_name(0, classify_api(where.api).domain);
  }
  if (draft.capture) {
    f.capture = draft.capture->id;
    finding_captures_[draft.capture->id] = true;
    f.capturing_thread = draft.capture->tid == where.tid;
    bool has_begin =
        std::any_of(draft.related.begin(), draft.related.end(),
                    [](const rules::RelatedSite& r) { return r.role == "capture-begin"; });
    if (!has_begin && draft.capture->begin.seq != where.seq)
      rules::add_capture_begin(draft, *draft.capture);
  }
  f.location = location(where);
  if (ev && !emitting_graph_ && call_.has_stream) {
    f.stream = call_.stream.handle;
  } else if (ev && emitting_graph_ && ev->has(trace::Field::Stream)) {  // call_ is not prepared
    f.stream = api->per_thread && ev->stream == 0 ? trace::kStreamPerThread : ev->stream;
  }
  for (rules::RelatedSite& r : draft.related)
    f.related.push_back({std::move(r.role), std::move(r.detail), location(r.site)});
  if (const Site* start = started_by(where))
    f.related.push_back({"started-by", fmt::format("thread {}", start->tid), location(*start)});
  report_.findings.push_back(std::move(f));
  return report_.findings.size() - 1;
}

CaptureLane Replay::lane(const Member& member, bool origin) const {
  CaptureLane lane;
  lane.stream = member.stream.handle;
  lane.work = member.work;
  lane.joined = member.joined;
  if (!origin) lane.forked_from = member.forked_from;
  if (!origin && member.fork_wait.known) lane.fork = location(member.fork_wait);
  if (member.join_wait.known) {
    lane.joined_into = member.joined_into;
    lane.join = location(member.join_wait);
  }
  if (member.last_work.known) {
    lane.last_work = location(member.last_work);
    lane.last_work_api = std::string(member.last_work.api);
  }
  return lane;
}

Location Replay::location(const Site& site) const {
  Location loc;
  loc.pid = pid_;
  loc.seq = site.seq;
  loc.stack_id = site.stack;
  if (site.stack != 0) {
    if (const StackSpan* span = stacks_.find(site.stack))
      loc.addresses.assign(stack_pool_.begin() + span->offset,
                           stack_pool_.begin() + span->offset + span->size);
    else
      ++undefined_stacks_;
  }
  return loc;
}

void Replay::report_open(Capture& capture, bool thread_exited) {
  if (std::find(reported_open_.begin(), reported_open_.end(), capture.id) != reported_open_.end())
    return;
  reported_open_.push_back(capture.id);
  for (const rules::Rule* rule : rules::rule_list()) {
    if (!rule->on_open) continue;
    rules::Draft draft;
    if (!rule->on_open(capture, thread_exited, draft)) continue;
    size_t index = emit(*rule, draft, nullptr, nullptr, capture.begin);
    report_.findings[index].capturing_thread = true;
    return;
  }
}

void Replay::thread_exit(uint32_t tid) {
  for (Capture* capture : model_.thread_exit(tid)) report_open(*capture, true);
}

void Replay::graph_node(const trace::GraphNodeRecord& record) {
  graphs_.on_graph_node(record);
  coverage_.on_graph_node(record);
  collectives_.on_graph_node(record);
}
void Replay::graph(const trace::GraphRecord& record) {
  graphs_.on_graph(record);
  coverage_.on_graph(record);
  if (const ExecState* exec = graphs_.find_exec(record.exec)) {
    const Site& site = exec->capture ? exec->capture->begin : exec->instantiate;
    collectives_.on_walked(record.exec, record.topology_hash, site, canonical_stack(site.stack));
  }
}
void Replay::graph_update(const trace::GraphUpdateRecord& record) {
  graphs_.on_graph_update(record);
  emit_graph_facts();
}

void Replay::emit_graph_facts() {
  emitting_graph_ = true;
  for (GraphFacts& facts : graphs_.pending()) {
    for (const rules::Rule* rule : rules::rule_list()) {
      if (!rule->on_graph) continue;
      rules::Draft draft;
      if (!rule->on_graph(facts, draft)) continue;
      const ApiInfo* api = facts.ev != nullptr ? &classify(facts.ev->api) : nullptr;
      const size_t finding = emit(*rule, draft, facts.ev, api, facts.where);
      graphs_.reported(facts, finding);
      if (facts.lifecycle_site != SIZE_MAX)
        lifecycle_findings_.emplace_back(facts.lifecycle_site, finding);
      break;
    }
  }
  emitting_graph_ = false;
  graphs_.pending().clear();
  for (const auto& [index, count] : graphs_.consequences())
    report_.findings[index].consequences += count;
  graphs_.consequences().clear();
}

void Replay::range_begin(const trace::RangeRecord& record) {
  rehearsal_.range_begin(record.seq, record.tid, record.id, record.domain, record.name);
}

void Replay::range_end(const trace::RangeRecord& record) {
  rehearsed_calls_.clear();
  rehearsal_.range_end(record.id, rehearsed_calls_);
  for (const RehearsalFacts& facts : rehearsed_calls_) rehearsal_judge(facts, nullptr, nullptr);
  rehearsal_.settle();
}

void Replay::rehearse(const ApiEvent& ev) {
  rehearsed_calls_.clear();
  rehearsal_.observe(call_, rehearsed_calls_);
  for (const RehearsalFacts& facts : rehearsed_calls_) rehearsal_judge(facts, &ev, &call_.api);
}

void Replay::rehearsal_judge(const RehearsalFacts& facts, const ApiEvent* ev, const ApiInfo* api) {
  rules::RehearsalWords words;
  const rules::Rule* rule = rules::rehearsal_rule(facts, words);
  if (rule == nullptr) return;
  uint32_t number = 0;  // the execution's, within its region
  const uint32_t region_index = rehearsal_.region_of(facts.execution, number);
  // The same call site breaks the same rule in every execution: one key (API names are
  // interned, so the name's address identifies it).
  const uint64_t key = mix_hash(
      mix_hash(uint64_t{region_index} << 16 | uint64_t{static_cast<uint8_t>(rule->id)} << 1 |
               uint64_t{facts.other_thread}) ^
      mix_hash(canonical_stack(facts.site.stack) ^
               mix_hash(reinterpret_cast<uintptr_t>(facts.site.api.data()))));
  const bool first_in_execution = rehearsal_.note(facts.execution, key);
  if (RehearsedBreak* known = rehearsed_.find(key)) {
    known->executions += first_in_execution;
    return;
  }
  const RehearsalRegion& region = rehearsal_.regions()[region_index];
  rules::Draft draft;
  draft.message = rules::rehearsal_message(facts, words, region.name, number);
  const ApiInfo info = api != nullptr ? *api : classify(facts.site.api);
  const size_t index = emit(*rule, draft, ev, api, facts.site);
  Finding& finding = report_.findings[index];
  finding.rehearsed = true;
  finding.region = region.name;
  finding.capturing_thread = !facts.other_thread;  // the region's thread, or another
  rehearsed_[key] = {index,      region_index,      1, rule, rules::rehearsal_category(words, info),
                     facts.site, facts.other_thread};
}

void Replay::add_rehearsals() {
  // A range still open when the trace ended (the process exited inside it) counts as ended.
  for (uint64_t id : rehearsal_.open_ranges()) range_end({0, 0, 0, id, {}, {}});
  const auto item_of = [&](uint64_t key) {
    RehearsalItem item;
    if (const RehearsedBreak* known = rehearsed_.find(key)) {
      item.what = std::string(known->category);
      item.rule = std::string(known->rule->info().id);
      item.api = std::string(known->site.api);
      item.thread = known->site.tid;
      item.other_thread = known->other_thread;
      item.executions = known->executions;
      item.location = location(known->site);
    }
    return item;
  };
  for (const RehearsalRegion& region : rehearsal_.regions()) {
    RehearsalInfo info;
    info.pid = pid_;
    info.process = process_;
    info.name = region.name;
    info.domain = region.domain;
    info.mode = rehearsal_.mode();
    info.executions = region.closed;
    std::vector<RehearsalItem> items;
    for (const auto& [key, last] : region.broken) {
      items.push_back(item_of(key));
      items.back().last_execution = last;
    }
    settle_verdict(info, std::move(items));
    report_.rehearsals.push_back(std::move(info));
  }
}

void Replay::finish() {
  if (finished_) return;
  finished_ = true;
  add_rehearsals();
  graphs_.finish();
  emit_graph_facts();
  add_lifecycle_table();
  if (coverage_.seen()) {
    CoverageInfo coverage = coverage_.info([this](uint32_t stack) {
      Site site;
      site.known = stack != 0;
      site.stack = stack;
      return location(site);
    });
    coverage.pid = pid_;
    coverage.process = process_;
    report_.coverage.push_back(std::move(coverage));
  }
  if (collectives_.any()) {
    RankCollectives collectives =
        collectives_.info([this](const Site& site) { return location(site); });
    collectives.pid = pid_;
    collectives.process = process_;
    report_.collectives.push_back(std::move(collectives));
  }
  std::vector<Capture*> open(model_.open_captures().begin(), model_.open_captures().end());
  for (Capture* capture : open) report_open(*capture, false);
  retire(model_.retire_ended(true));
  // Retired as they stopped mattering; listed, as before, in the order they began.
  std::stable_sort(report_.captures.begin() + static_cast<ptrdiff_t>(first_capture_index_),
                   report_.captures.end(),
                   [](const CaptureInfo& a, const CaptureInfo& b) { return a.id < b.id; });
}

uint64_t Replay::stack_key(const Site& site) const {
  const StackSpan* span = site.stack != 0 ? stacks_.find(site.stack) : nullptr;
  return span ? (uint64_t{span->offset} << 32 | span->size) : ~uint64_t{0};
}

CaptureInfo Replay::capture_info(const Capture& c) const {
  CaptureInfo info;
  info.id = c.id;
  info.pid = pid_;
  info.process = process_;
  info.thread = c.tid;
  info.stream = c.origin.handle;
  info.mode = c.mode;
  info.status = c.status;
  info.nodes = c.nodes;
  info.begin = location(c.begin);
  if (c.end.known) info.end = location(c.end);
  info.root_cause = c.root_cause;
  for (const Member& m : CaptureModel::lanes_of(c))
    info.lanes.push_back(lane(m, info.lanes.empty()));
  return info;
}

void Replay::retire(std::vector<std::unique_ptr<Capture>> captures) {
  for (const auto& c : captures) {
    if (c->clocks_dropped && ++partial_capture_count_ <= 10) partial_captures_.push_back(c->id);
    const bool clean = c->status == CaptureState::Ok && !finding_captures_.find(c->id);
    if (!clean || report_.captures.size() < kCapturesInDetail) {
      report_.captures.push_back(capture_info(*c));
      continue;
    }
    const CleanGroupKey key{c->tid, c->origin.handle, c->mode, stack_key(c->begin),
                            c->end.known ? stack_key(c->end) : ~uint64_t{1}};
    size_t* index = clean_groups_.find(key);
    // A program (or a hostile trace) capturing from ever new sites: past a bound the rest of
    // this process's clean captures share one entry, so memory stays bounded.
    if (index == nullptr && clean_groups_.size() >= kCleanSitesInDetail) {
      if (!other_sites_group_) {
        other_sites_group_ = report_.captures.size();
        report_.captures.push_back(capture_info(*c));
        report_.captures.back().other_sites = true;
        continue;
      }
      index = &*other_sites_group_;
    }
    if (index != nullptr) {
      CaptureInfo& group = report_.captures[*index];
      ++group.count;
      group.last_id = c->id;
      if (group.nodes != c->nodes) group.nodes.reset();
      continue;
    }
    clean_groups_[key] = report_.captures.size();
    report_.captures.push_back(capture_info(*c));
  }
}

void Replay::add_lifecycle_table() {
  const std::vector<SiteSummary>& sites = graphs_.lifecycle().sites();
  const size_t first = report_.graph_sites.size();
  for (size_t i = 0; i < sites.size(); ++i) {
    const SiteSummary& s = sites[i];
    GraphSiteInfo info;
    info.pid = pid_;
    info.process = process_;
    info.site = location(s.site);
    info.captured = s.captured;
    info.graphs = s.graphs;
    info.keys = s.keys;
    info.topologies = s.topologies;
    info.updates = s.updates;
    info.alive_at_exit = s.alive;
    info.launches = s.launches;
    info.launches_at_least = s.launches_at_least;
    info.capture_ns = s.capture_ns;
    info.pool_bytes = s.pool_bytes;
    for (const auto& [site, finding] : lifecycle_findings_)
      if (site == i) info.findings.push_back(finding);
    for (const HeldRowFacts& row : graphs_.held(i)) {
      HeldMemory& held = info.held.emplace_back();
      held.event_owner = std::string(row.event_owner);
      held.alloc_known = row.alloc.known;
      if (row.alloc.known) held.alloc = location(row.alloc), held.api = std::string(row.alloc.api);
      held.in_capture = row.in_capture;
      held.other_rows = row.other_rows;
      held.blocks = row.blocks;
      held.bytes = row.bytes;
      held.addresses = row.addresses;
      held.released = row.released;
    }
    report_.graph_sites.push_back(std::move(info));
  }
  // Most graphs first (then most launches), so that a short table shows the sites that matter.
  std::stable_sort(report_.graph_sites.begin() + static_cast<ptrdiff_t>(first),
                   report_.graph_sites.end(), [](const GraphSiteInfo& a, const GraphSiteInfo& b) {
                     return a.graphs != b.graphs ? a.graphs > b.graphs : a.launches > b.launches;
                   });
}

}  // namespace capguard
