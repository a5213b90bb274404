// Capture rehearsal asks the rule table (rules/rehearsal.cpp): each rule that declares
// Rule::on_rehearsal judges what the rehearsal model saw. A table of facts and the rule that
// must name them (or none), in the order the table tries the rules.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <string_view>

#include "rules/rehearsal.h"

using namespace capguard;
using trace::CaptureMode;

namespace {

RehearsalFacts own(ApiKind kind) {
  RehearsalFacts f;
  f.api.kind = kind;
  f.region_has_streams = true;
  return f;
}

std::string judged(const RehearsalFacts& f) {
  rules::RehearsalWords words;
  const rules::Rule* rule = rules::rehearsal_rule(f, words);
  if (rule == nullptr) return "";
  CHECK(!words.consequence.empty());
  CHECK(!words.category.empty());
  return std::string(rule->info().id);
}

}  // namespace

TEST_CASE("rehearsal: the rules that declare on_rehearsal, in table order") {
  std::set<std::string> rehearsable;
  for (const rules::Rule* rule : rules::rehearsal_rules())
    rehearsable.insert(std::string(rule->info().id));
  CHECK(rehearsable == std::set<std::string>{
                           "sync-during-capture", "captured-event-query",
                           "unsafe-call-during-capture", "legacy-stream-during-capture",
                           "unjoined-fork", "uncaptured-event-wait", "unsupported-during-capture",
                           "escaped-sync-copy", "escaped-legacy-work", "escaped-side-stream-work",
                           "relaxed-mode-unsafe-call"});
}

TEST_CASE("rehearsal: facts to rules") {
  struct Row {
    const char* what;
    RehearsalFacts facts;
    std::string_view rule;  // empty: nothing breaks
  };
  RehearsalFacts stream_sync = own(ApiKind::StreamSync);
  stream_sync.has_stream = true, stream_sync.stream_in_region = true;
  RehearsalFacts other_stream_sync = stream_sync;
  other_stream_sync.stream_in_region = false;
  RehearsalFacts other_device_sync = own(ApiKind::DeviceSync);
  other_device_sync.other_thread = true;
  RehearsalFacts other_device_sync_relaxed = other_device_sync;
  other_device_sync_relaxed.mode = CaptureMode::ThreadLocal;
  RehearsalFacts event_sync = own(ApiKind::EventSync);
  event_sync.event_in_region = true;
  RehearsalFacts event_sync_outside = own(ApiKind::EventSync);
  RehearsalFacts relaxed_unsafe = own(ApiKind::Unsafe);
  relaxed_unsafe.mode = CaptureMode::Relaxed;
  RehearsalFacts exchanged_unsafe = own(ApiKind::Unsafe);
  exchanged_unsafe.thread_mode = CaptureMode::Relaxed;
  RehearsalFacts other_unsafe = own(ApiKind::Unsafe);
  other_unsafe.other_thread = true;
  RehearsalFacts other_unsafe_thread_local = other_unsafe;
  other_unsafe_thread_local.thread_mode = CaptureMode::ThreadLocal;
  RehearsalFacts copy_blocking = own(ApiKind::SyncCopy);
  RehearsalFacts copy_non_blocking = copy_blocking;
  copy_non_blocking.origin_non_blocking = true;
  RehearsalFacts legacy_launch = own(ApiKind::Enqueue);
  legacy_launch.has_stream = true, legacy_launch.stream_legacy = true;
  RehearsalFacts legacy_launch_non_blocking = legacy_launch;
  legacy_launch_non_blocking.origin_non_blocking = true;
  RehearsalFacts side_launch = own(ApiKind::Enqueue);
  side_launch.has_stream = true;
  RehearsalFacts side_record = own(ApiKind::EventRecord);
  side_record.has_stream = true;
  RehearsalFacts member_launch = side_launch;
  member_launch.stream_in_region = true;
  RehearsalFacts outside_wait = own(ApiKind::StreamWaitEvent);
  outside_wait.has_stream = true, outside_wait.stream_in_region = true;
  RehearsalFacts external_wait = outside_wait;
  external_wait.wait_external = true;
  RehearsalFacts unjoined;
  unjoined.unjoined_fork = true;

  const Row rows[] = {
      {"device sync", own(ApiKind::DeviceSync), "sync-during-capture"},
      {"region stream sync", stream_sync, "sync-during-capture"},
      {"another stream's sync", other_stream_sync, ""},
      {"another thread's device sync, global", other_device_sync, "sync-during-capture"},
      {"another thread's device sync, thread_local", other_device_sync_relaxed, ""},
      {"event recorded in the region", event_sync, "captured-event-query"},
      {"event recorded before", event_sync_outside, ""},
      {"allocation", own(ApiKind::Unsafe), "unsafe-call-during-capture"},
      {"allocation, relaxed region", relaxed_unsafe, "relaxed-mode-unsafe-call"},
      {"allocation, thread exchanged to relaxed", exchanged_unsafe, ""},
      {"another thread's allocation, global", other_unsafe, "unsafe-call-during-capture"},
      {"another thread's allocation, it exchanged to thread_local", other_unsafe_thread_local,
       ""},
      {"unsupported", own(ApiKind::Unsupported), "unsupported-during-capture"},
      {"sync copy, blocking origin", copy_blocking, "legacy-stream-during-capture"},
      {"sync copy, non-blocking origin", copy_non_blocking, "escaped-sync-copy"},
      {"legacy launch, blocking origin", legacy_launch, "legacy-stream-during-capture"},
      {"legacy launch, non-blocking origin", legacy_launch_non_blocking, "escaped-legacy-work"},
      {"launch on a stream not forked in", side_launch, "escaped-side-stream-work"},
      {"record on a stream not forked in", side_record, ""},
      {"launch on a region stream", member_launch, ""},
      {"wait on an event recorded before", outside_wait, "uncaptured-event-wait"},
      {"external wait", external_wait, ""},
      {"fork left unjoined", unjoined, "unjoined-fork"},
      {"kernel-less call", own(ApiKind::Other), ""},
  };
  for (const Row& row : rows) {
    CAPTURE(row.what);
    CHECK(judged(row.facts) == row.rule);
  }
}
