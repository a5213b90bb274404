#include "model/framework_calls.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <optional>
#include <utility>

#include "model/frame_owner.h"
#include "trace/framework_memory.h"

namespace capguard {
namespace {

constexpr FrameworkCall kCalls[] = {
#define CAPGUARD_FRAMEWORK_CALL(kind, function, file, words, rules, fix) \
  {FrameworkCallKind::kind, function, file, words, rules, fix},
#include "model/framework_calls.def"
};

constexpr FrameworkFix kFixes[] = {
#define CAPGUARD_FRAMEWORK_FIX(framework, rule, headline, fix) \
  {Framework::framework, rule, headline, fix},
#include "model/framework_fixes.def"
};

// `pattern` occurs in `text`, where '*' in the pattern stands for any run of characters (for
// Cython's names: __pyx_pw_4cupy_4cuda_6stream_11_BaseStream_19synchronize).
bool contains(std::string_view text, std::string_view pattern) {
  size_t from = 0;
  while (!pattern.empty()) {
    const size_t star = pattern.find('*');
    const std::string_view piece = pattern.substr(0, star);
    const size_t at = text.find(piece, from);
    if (at == std::string_view::npos) return false;
    from = at + piece.size();
    if (star == std::string_view::npos) break;
    pattern.remove_prefix(star + 1);
  }
  return true;
}

bool matches(const FrameworkCall& call, const Frame& frame) {
  if (call.kind == FrameworkCallKind::Owner)
    return !is_python_frame(frame) && contains(frame.function, call.function) &&
           (call.file.empty() || frame.module.find(call.file) != std::string::npos);
  if (call.kind == FrameworkCallKind::Raised)
    return is_python_exception_frame(frame) && contains(frame.function, call.function);
  const bool python = is_python_frame(frame);
  if (call.file.empty()) return !python && contains(frame.function, call.function);
  return python && frame.function == call.function &&
         frame.file.find(call.file) != std::string::npos;
}

// The Owner row of a module, for the check below.
constexpr std::string_view owner_words_of(std::string_view module) {
  for (const FrameworkCall& call : kCalls)
    if (call.kind == FrameworkCallKind::Owner && call.file == module) return call.words;
  return {};
}
// Rows of the held memory that a framework's events named (trace/framework_memory.def) and those
// its segments' stacks name must say the same owner, or they would not merge.
static_assert(owner_words_of("libc10_cuda") ==
              trace::framework_memory(trace::FrameworkMemory::TorchAlloc).owner);
static_assert(owner_words_of("cupy/cuda/memory") ==
              trace::framework_memory(trace::FrameworkMemory::CupyAlloc).owner);

}  // namespace

std::span<const FrameworkCall> framework_calls() { return kCalls; }
std::span<const FrameworkFix> framework_fixes() { return kFixes; }

std::string_view framework_name(Framework framework) {
  switch (framework) {
    case Framework::PyTorch:
      return "PyTorch";
    case Framework::TorchCompile:
      return "torch.compile";
    case Framework::CuPy:
      return "CuPy";
    case Framework::JAX:
      return "JAX";
    case Framework::Triton:
      return "Triton";
    case Framework::None:
      break;
  }
  return "CUDA";
}

namespace {

// The framework a frame's code belongs to: its Python file's or native module's package.
Framework framework_of_frame(const Frame& frame) {
  const std::string& path = is_python_frame(frame) ? frame.file : frame.module;
  for (std::string_view marker : {"site-packages/", "dist-packages/"}) {
    const size_t at = path.rfind(marker);
    if (at == std::string::npos) continue;
    const std::string_view package = std::string_view(path).substr(at + marker.size());
    if (package.starts_with("torch/_dynamo/") || package.starts_with("torch/_inductor/"))
      return Framework::TorchCompile;
    if (package.starts_with("torch/")) return Framework::PyTorch;
    if (package.starts_with("cupy")) return Framework::CuPy;
    if (package.starts_with("jax/") || package.starts_with("jaxlib/") ||
        package.starts_with("jax_"))
      return Framework::JAX;
    if (package.starts_with("triton/")) return Framework::Triton;
  }
  if (is_python_frame(frame) && generated_by(frame.file) == GeneratedBy::TorchCompile)
    return Framework::TorchCompile;  // Inductor's generated code
  return Framework::None;
}

}  // namespace

Framework framework_of(const Location& location) {
  const auto& frames = location.frames;
  bool python = false;
  for (const Frame& frame : frames) python = python || is_python_frame(frame);
  if (!python && location.user_frame >= 0) return Framework::None;  // a C++ program
  const size_t user =
      location.user_frame >= 0 ? static_cast<size_t>(location.user_frame) : frames.size();
  Framework found = Framework::None;
  // The innermost framework wins (Triton's launcher under PyTorch's stream), torch.compile
  // over the PyTorch code it runs.
  for (size_t i = 0; i < user; ++i) {
    const Framework f = framework_of_frame(frames[i]);
    if (f == Framework::TorchCompile) return f;
    if (found == Framework::None) found = f;
  }
  return found;
}

const FrameworkFix* framework_fix(Framework framework, std::string_view rule) {
  for (Framework f : {framework, Framework::PyTorch}) {
    for (const FrameworkFix& fix : kFixes)
      if (fix.framework == f && fix.rule == rule) return &fix;
    if (framework != Framework::TorchCompile) break;
  }
  return nullptr;
}

const FrameworkCall* framework_call_of(const Location& location) {
  const auto& frames = location.frames;
  if (frames.empty()) return nullptr;
  const size_t user =
      location.user_frame >= 0 ? static_cast<size_t>(location.user_frame) : frames.size();
  // From the user frame (or, on a thread without one, the outermost frame) toward CUDA: the
  // entry point closest to the user wins, a first use too (getCurrentCUDABlasHandle before the
  // cublasCreate_v2 it calls).
  for (size_t i = user; i-- > 0;) {
    for (const FrameworkCall& call : kCalls)
      if (call.kind != FrameworkCallKind::CaptureAware && call.kind != FrameworkCallKind::Thread &&
          call.kind != FrameworkCallKind::Release && call.kind != FrameworkCallKind::Owner &&
          matches(call, frames[i]))
        return &call;
  }
  // A first use outside the user's frame (the user's function traced by torch.compile).
  for (size_t i = user; i < frames.size(); ++i)
    for (const FrameworkCall& call : kCalls)
      if (call.kind == FrameworkCallKind::FirstUse && matches(call, frames[i])) return &call;
  return nullptr;
}

const FrameworkCall* capture_aware_call(const Location& location) {
  for (const Frame& frame : location.frames)
    for (const FrameworkCall& call : kCalls)
      if (call.kind == FrameworkCallKind::CaptureAware && matches(call, frame)) return &call;
  return nullptr;
}

const FrameworkCall* framework_thread_of(const Location& location) {
  for (size_t i = location.frames.size(); i-- > 0;)  // the thread's body is outermost
    for (const FrameworkCall& call : kCalls)
      if (call.kind == FrameworkCallKind::Thread && matches(call, location.frames[i])) return &call;
  return nullptr;
}

const FrameworkCall* release_call_of(const Location& location) {
  for (const Frame& frame : location.frames)  // the innermost names what released it
    for (const FrameworkCall& call : kCalls)
      if (call.kind == FrameworkCallKind::Release && matches(call, frame)) return &call;
  return nullptr;
}

const FrameworkCall* memory_owner_of(const Location& allocation) {
  for (const FrameworkCall& call : kCalls) {
    if (call.kind != FrameworkCallKind::Owner) continue;
    for (const Frame& frame : allocation.frames)
      if (matches(call, frame)) return &call;
  }
  return nullptr;
}

namespace {

constexpr std::string_view kUnknownOwner = "unknown";
constexpr std::string_view kOtherRows = "other allocations";

// The owner's pool for memory allocated outside captures or during one ("OUTSIDE|DURING").
std::string_view pool_words(std::string_view pools, bool during_capture) {
  const size_t bar = pools.find('|');
  if (bar == std::string_view::npos) return {};
  return during_capture ? pools.substr(bar + 1) : pools.substr(0, bar);
}

void name_row(HeldMemory& row) {
  if (row.other_rows) {
    row.owner = kOtherRows;
    return;
  }
  if (!row.alloc_known && row.event_owner.empty()) {
    row.owner = kUnknownOwner;
    return;
  }
  const FrameworkCall* owner = memory_owner_of(row.alloc);
  if (!row.event_owner.empty()) {
    // The allocator's events named the block: its tracker sees its default pool only.
    row.owner = row.event_owner;
    for (const FrameworkCall& call : kCalls)
      if (call.kind == FrameworkCallKind::Owner && call.words == row.owner)
        row.pool = pool_words(call.fix, false);
  } else if (owner != nullptr) {
    row.owner = owner->words;
    row.pool = pool_words(owner->fix, row.in_capture);
  } else {
    row.owner = row.api.empty() ? std::string(kUnknownOwner) : row.api;
  }
  // A pool's segment was allocated for whichever block came first: its line says nothing of the
  // memory the graph holds.
  if (!row.event_owner.empty() || owner != nullptr) row.alloc = Location{};
}

// What tells two rows of one owner apart: memory the program allocated itself, by its user line.
std::string row_key(const HeldMemory& row) {
  std::string key = row.owner + '\n' + row.pool + '\n';
  if (const Frame* user = row.alloc.user())
    key += user->file + ':' + std::to_string(user->line) + ' ' + user->function;
  else if (const size_t first = first_frame_outside_cuda(row.alloc.frames);
           first < row.alloc.frames.size())
    key += row.alloc.frames[first].module + ':' + std::to_string(row.alloc.frames[first].offset);
  return key;
}

}  // namespace

void name_held_memory(Report& report) {
  for (GraphSiteInfo& site : report.graph_sites) {
    if (site.held.empty()) continue;
    std::vector<HeldMemory> merged;
    std::map<std::string, size_t> index;
    for (HeldMemory& row : site.held) {
      if (row.owner.empty()) name_row(row);
      const auto [at, fresh] = index.try_emplace(row_key(row), merged.size());
      if (fresh) {
        merged.push_back(std::move(row));
        continue;
      }
      HeldMemory& into = merged[at->second];
      into.blocks += row.blocks;
      into.bytes += row.bytes;
      into.addresses += row.addresses;
      into.released += row.released;
    }
    std::stable_sort(merged.begin(), merged.end(), [](const HeldMemory& a, const HeldMemory& b) {
      const auto last = [](const HeldMemory& r) {
        return r.other_rows ? 2 : r.owner == kUnknownOwner ? 1 : 0;
      };
      if (last(a) != last(b)) return last(a) < last(b);
      return a.bytes != b.bytes ? a.bytes > b.bytes : a.addresses > b.addresses;
    });
    site.held = std::move(merged);
  }
}

namespace {

// A finding on a thread without a user frame: its thread's name, and the user line that
// started the work (the replay's "started-by" guess: another thread's latest call before it).
void name_thread(Finding& finding) {
  const bool threadless = finding.location.user() == nullptr && !finding.location.frames.empty();
  if (threadless)
    if (const FrameworkCall* thread = framework_thread_of(finding.location))
      finding.thread_name = std::string(thread->words);
  std::erase_if(finding.related, [&](const Related& related) {
    return related.role == "started-by" && (!threadless || related.location.user() == nullptr);
  });
}

// The findings by the call they were made at (pid, seq): a rehearsal item looks its finding up
// once, not by a scan (100k items against 100k findings took minutes: tests/hostile).
using FindingsByCall = std::map<std::pair<uint32_t, uint64_t>, const Finding*>;
FindingsByCall findings_by_call(const Report& report) {
  FindingsByCall by_call;
  for (const Finding& finding : report.findings)
    by_call.try_emplace({finding.pid, finding.location.seq}, &finding);
  return by_call;
}

// A rehearsal item on a thread without a user frame: what its finding (the same call) says.
void name_item_thread(const FindingsByCall& by_call, RehearsalItem& item) {
  const auto found = by_call.find({item.location.pid, item.location.seq});
  if (found == by_call.end()) return;
  const Finding& finding = *found->second;
  item.thread_name = finding.thread_name;
  for (const Related& related : finding.related)
    if (related.role == "started-by" && related.location.user() != nullptr)
      item.started_by = *related.location.user();
}

}  // namespace

void name_framework_calls(Report& report) {
  for (Finding& finding : report.findings) {
    name_thread(finding);
    // Memory a graph holds, given back by something other than the user's own free: said first.
    const FrameworkCall* released = nullptr;
    for (const Related& related : finding.related)
      if (related.role == "free" && (released = release_call_of(related.location))) break;
    if (released != nullptr) {
      finding.framework_headline = std::string(released->words);
      finding.framework_fix = std::string(released->fix);
      if (const size_t at = finding.message.find(". Fix: "); at != std::string::npos)
        finding.message.resize(at);
      continue;
    }
    const FrameworkCall* call = framework_call_of(finding.location);
    if (call != nullptr) {
      finding.framework_call = std::string(call->words);
      finding.framework_fix = std::string(call->fix);
      continue;
    }
    const FrameworkFix* fix = framework_fix(framework_of(finding.location), finding.rule);
    if (fix == nullptr) continue;
    finding.framework_headline = std::string(fix->headline);
    finding.framework_fix = std::string(fix->fix);
    // The message's own fix is CUDA's: the framework's replaces it.
    if (const size_t at = finding.message.find(". Fix: "); at != std::string::npos)
      finding.message.resize(at);
  }
  name_held_memory(report);
  std::optional<FindingsByCall> by_call;  // made once, when an item needs it
  for (RehearsalInfo& rehearsal : report.rehearsals)
    for (auto* items : {&rehearsal.warmup, &rehearsal.breaks})
      for (RehearsalItem& item : *items) {
        if (const FrameworkCall* call = framework_call_of(item.location))
          item.first_use = std::string(call->words);
        if (item.location.user() != nullptr) continue;
        if (!by_call) by_call = findings_by_call(report);
        name_item_thread(*by_call, item);
      }
}

}  // namespace capguard
