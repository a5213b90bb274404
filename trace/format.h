// The capguard trace format, shared by the interposer (writer) and the analyzer (reader).
//
// A trace is UTF-8 text, one record per line, written by one process. Each record is one
// opcode character, a space, then space-separated fields. Numbers are lower-case hex without
// "0x". Strings that may contain spaces or newlines are escaped: every byte outside 0x21..0x7e
// and every '%' is written as %XX. Grammar (version 9; version 1 is the same without Python
// frames, version 2 the same without the graph records, version 3 without a graph node's
// geometry and scalar hash, version 4 without the CUPTI client records, version 5 without the
// rehearsed ranges, version 6 without the CUDA versions, version 7 without the who-ran record,
// version 8 without the kernel records; readers accept all nine):
//
//   trace    := header record* ['z' end]
//   header   := 'v' tool-version format-version              first line, exactly once
//   record   := process | command | module | python-frame | stack | event | thread-exit
//               | attach | graph-node | graph | graph-update | cupti-client
//               | range-begin | range-end | rehearse | cuda | who-ran
//               | kernel-name | launch-count | kernel-args
//   process  := 'p' pid ppid start-unix-ns                   once, right after the header
//   command  := 'c' escaped-command-line                     once
//   attach   := 'i' state escaped-message                    state: 'ok' | 'failed'
//   module   := 'm' base start end escaped-path [build-id]   a loaded object's mapped range
//   python-frame := 'y' id line escaped-file escaped-function
//                                                            a Python code location (v2);
//                                                            defined before its first use
//   stack    := 's' id addr* ['y' python-frame-id+]          a call stack, innermost first;
//                                                            defined before its first use;
//                                                            native return addresses, then
//                                                            the calling thread's Python
//                                                            frames (v2); at least one entry
//   event    := 'e' seq time-ns tid api result stack field*  one API call, written at its exit
//   field    := key '=' hex                                  keys: trace/event_fields.def;
//                                                            unknown keys are ignored
//                                                            (same major version)
//   thread-exit := 'x' tid time-ns
//   graph-node := 'g' exec index depth type escaped-name ref* [geometry] [scalars]
//                                                            one node of the graph an exec was
//                                                            instantiated from (v3), written
//                                                            after the instantiate's event;
//                                                            index counts nodes in walk order,
//                                                            depth 0 top level, 1+ inside
//                                                            child graphs; type: CUgraphNodeType;
//                                                            name: the kernel's ('' otherwise)
//   ref      := role index ':' hex                           an address the node uses: role 'a'
//                                                            kernel argument (index: the
//                                                            parameter), 's' copy source, 'd'
//                                                            copy/memset destination (index 0)
//   geometry := 'x' hex (',' hex)*                          what fixes the node's shape (v4),
//                                                            at most 7: a kernel's grid x y z,
//                                                            block x y z, shared bytes; a
//                                                            memcpy's width height depth; a
//                                                            memset's width height element size
//   scalars  := 'v' hex                                      a hash of the kernel's arguments
//                                                            that are no ref (v4): scalars
//   graph    := 'G' exec graph nodes edges topology-hash complete
//                                                            after the exec's nodes (v3):
//                                                            complete 0 when the walk stopped
//                                                            at its bounds
//   graph-update := 'u' seq exec result error-type escaped-name
//                                                            cudaGraphExecUpdate's details for
//                                                            event `seq` (v3): result is
//                                                            cudaGraphExecUpdateResult, then
//                                                            the error node's type (ff: none)
//                                                            and kernel name
//   cupti-client := 'k' time-ns tid what escaped-name     the program's own CUPTI client
//                                                            (v5): name is its subscriber
//                                                            name or the library that called;
//                                                            what: 'forwarding' (subscribed,
//                                                            capguard hands it the callbacks
//                                                            it enables), 'beside' (subscribed
//                                                            beside capguard: CUPTI's
//                                                            multi-subscriber mode), 'left'
//                                                            (unsubscribed), 'finalize' (asked
//                                                            cuptiFinalize; capguard kept
//                                                            CUPTI, the client's subscription
//                                                            ended), 'refused' (a second
//                                                            client, refused as CUPTI refuses
//                                                            it without capguard), 'lost'
//                                                            (capguard's own subscription was
//                                                            gone at exit: CUPTI was finalized
//                                                            behind its back; name: who was
//                                                            last seen subscribing, or '')
//   range-begin := 'r' seq time-ns tid range escaped-domain escaped-name
//                                                            an NVTX range whose message matched
//                                                            `capguard run --rehearse GLOB` was
//                                                            opened (v6): push/pop or
//                                                            start/end, in any domain ('' the
//                                                            default one); range: a process-
//                                                            unique id, never 0; seq counts with
//                                                            the events' seq
//   range-end := 'R' seq time-ns tid range                   that range closed (pop or end; the
//                                                            thread may differ for start/end)
//   rehearse := 'q' escaped-glob                             one `--rehearse GLOB` of the run
//                                                            (v6): the analysis names a pattern
//                                                            no range matched, in any process
//   cuda     := 'w' runtime driver cupti-major cupti-api linkage other-runtime
//               escaped-runtime-path escaped-cupti-path      the CUDA the process ran (v7),
//                                                            at attach, before 'i':
//                                                            runtime and driver as CUDA_VERSION
//                                                            (3cf0 = 15600 = 15.6; 0 unknown),
//                                                            the CUPTI's major and API version
//                                                            (cuptiGetVersion; 0 none loaded),
//                                                            linkage 'shared' | 'static' |
//                                                            'unknown', other-runtime a second
//                                                            runtime of another major (0 none)
//   who-ran  := 'h' escaped-host launcher-var*               who ran the process (v8),
//                                                            once, after the command:
//                                                            the host name (gethostname, or
//                                                            CAPGUARD_HOST where a test
//                                                            simulates nodes) and the
//                                                            launchers' variables set then
//   launcher-var := NAME '=' escaped-value                   NAME: trace/launcher_vars.def
//                                                            (RANK, SLURM_PROCID,
//                                                            CUDA_VISIBLE_DEVICES...); unknown
//                                                            names are ignored; at most
//                                                            kMaxLauncherVars
//   kernel-name := 'f' function escaped-name                a kernel function handle that the
//                                                            'n' and 'a' records name (v9),
//                                                            before its first use; the
//                                                            driver's (mangled) name
//   launch-count := 'n' seq time-ns tid what item*          graph coverage (v9): the kernel
//                                                            launches counted since the
//                                                            previous 'n'; what: 'start' (the
//                                                            first graph launch: counting
//                                                            begins), 'blind' (the same, but
//                                                            eager launches bypass capguard's
//                                                            launch hooks: none are counted),
//                                                            'phase' (a graph launch after
//                                                            eager launches ends the phase
//                                                            between replays), 'exit' (what
//                                                            was left at exit); at most
//                                                            kMaxLaunchItems items, a phase
//                                                            with more continues in the next
//                                                            'phase' record at the same seq
//   item     := 'x' exec ':' launches                        graph launches of an exec
//               | 'k' function ':' launches ':' threads ':' stack
//                                                            eager launches of a kernel
//                                                            function outside captures;
//                                                            threads: grid x block, summed;
//                                                            stack: of its first launch in the
//                                                            phase (0: none)
//   kernel-args := 'a' exec index order ['x' geometry] arg* a kernel node's arguments (v9), after
//                                                            its 'g' record: order 0 the node's
//                                                            own arguments of at most 8 bytes
//                                                            that are no ref; order n >= 1 the
//                                                            same kernel function's n-th last
//                                                            eager launch before the walk, with
//                                                            its geometry (7 numbers, as 'g')
//   arg      := param ':' size ':' hex                       the argument's bytes (size 1..8)
//                                                            as a little-endian number; at
//                                                            most kMaxKernelArgs
//   end      := 'z' time-ns exit-status                      clean process exit
//
// `api` is the CUDA function name as CUPTI reports it (cudaMemcpyAsync_ptsz, cuMemcpyHtoD_v2);
// `result` is its cudaError_t / CUresult; `stack` is 0 when no stack was recorded. Each record
// is written with one write(2) on an O_APPEND descriptor, so the file order is the order in
// which calls finished and a process that dies right after a call loses nothing.
//
// Details the grammar leaves open: fields are separated by exactly one space, so an empty
// escaped string is an empty field ("c " is an empty command line). `result` and
// `exit-status` are the 32-bit two's-complement pattern of the signed value. The writer
// replaces bytes of `api` outside 0x21..0x7e with '?' and clamps stacks to 64 frames; a
// stack id is never 0 (0 in an event means "no stack"). Records of other threads may follow
// 'z' (they were still running while the process exited); readers accept them. A Python
// frame id is never 0 and lives in its own namespace (not a stack id); `line` is 0 when
// unknown. The native part of a stack and its Python part are each innermost first; where the
// Python frames sit among the native ones (inside the interpreter's frames) is the reader's
// to work out. Python frame ids, like stack ids, may be defined twice (by two threads).
//
// Readers refuse a format-version newer than kFormatVersion with a message naming both.
#pragma once

#include <cstdint>

namespace capguard::trace {

inline constexpr int kFormatVersion = 9;
inline constexpr char kToolVersion[] = "0.1.0";

// A python-frame record with this file is no frame: the Python exception the thread was
// handling when it ended a capture, innermost in its stack's Python part; function
// "Type: first line of the message", line where it passed through the frame handling it.
inline constexpr char kPythonExceptionFile[] = "<exception>";

// Bounds both sides agree on. The writer never produces more; the reader rejects more, so a
// damaged trace cannot make it allocate without limit.
inline constexpr unsigned kMaxApiNameLength = 256;     // bytes of an event's `api`
inline constexpr unsigned kMaxLineLength = 64 * 1024;  // bytes of one record, '\n' excluded

// Optional event fields, listed once in trace/event_fields.def: each one's position there
// (FieldIndex), its bit in ApiEvent::fields (Field) and the key written in the trace.
enum FieldIndex : int {
#define CAPGUARD_EVENT_FIELD(Name, ...) kField##Name,
#include "trace/event_fields.def"
  kFieldIndexEnd
};
inline constexpr int kFieldCount = kFieldIndexEnd;

enum class Field : uint32_t {
#define CAPGUARD_EVENT_FIELD(Name, ...) Name = 1u << kField##Name,
#include "trace/event_fields.def"
};
static_assert(kFieldCount <= 32, "ApiEvent::fields has 32 bits");

// Keys, in the order of the bits above.
inline constexpr const char* kFieldKeys[] = {
#define CAPGUARD_EVENT_FIELD(Name, key, ...) #key,
#include "trace/event_fields.def"
};

// cudaStreamCaptureStatus values as CUDA defines them.
enum class CaptureStatus : uint8_t { None = 0, Active = 1, Invalidated = 2 };
// cudaStreamCaptureMode values as CUDA defines them.
enum class CaptureMode : uint8_t { Global = 0, ThreadLocal = 1, Relaxed = 2 };
enum class ApiDomain : uint8_t { Runtime = 0, Driver = 1 };

// What the program's own CUPTI client did ('k' records), and the word the trace uses for it.
enum class CuptiClientEvent : uint8_t {
#define CAPGUARD_CUPTI_CLIENT_EVENT(Name, word) Name,
#include "trace/cupti_client_events.def"
};
inline constexpr const char* kCuptiClientEventWords[] = {
#define CAPGUARD_CUPTI_CLIENT_EVENT(Name, word) word,
#include "trace/cupti_client_events.def"
};

// Who ran it (v8): launcher variables in one 'h' record, each value cut at this many bytes.
inline constexpr unsigned kMaxLauncherVars = 32;
inline constexpr unsigned kMaxLauncherValueLength = 1024;
inline constexpr unsigned kMaxHostLength = 255;

// NVTX range messages kept in a range-begin record (longer ones are cut).
inline constexpr unsigned kMaxRangeNameLength = 256;

// Well-known stream handles.
inline constexpr uint64_t kStreamLegacy = 0x1;     // cudaStreamLegacy / CU_STREAM_LEGACY
inline constexpr uint64_t kStreamPerThread = 0x2;  // cudaStreamPerThread / CU_STREAM_PER_THREAD

}  // namespace capguard::trace
