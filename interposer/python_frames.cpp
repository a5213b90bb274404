#include "interposer/python_frames.h"

#include <dlfcn.h>

#include <atomic>
#include <cstring>
#include <string_view>

namespace capguard::interposer {
namespace {

// Where CPython keeps what the walk reads, per minor version (x86-64 and aarch64 alike:
// all fields are pointers, ints and chars). From the versions' own headers, offsetof().
struct Layout {
  unsigned version;            // 0x030b0000 style, major and minor only
  size_t thread_frame_holder;  // PyThreadState: cframe (3.11, 3.12) / current_frame (3.13)
  bool through_cframe;         // then _PyCFrame.current_frame at cframe_current_frame
  size_t cframe_current_frame;
  size_t frame_code, frame_previous, frame_instr, frame_owner;               // _PyInterpreterFrame
  size_t code_filename, code_qualname, code_bytecode, code_first_traceable;  // PyCodeObject
  size_t ascii_data;  // sizeof(PyASCIIObject): where a compact ASCII string's bytes begin
  bool has_cstack_owner;
  size_t thread_exc_info;  // PyThreadState.exc_info: the exception being handled
};

constexpr Layout kLayouts[] = {
    {0x030b0000, 56, true, 8, 32, 48, 56, 69, 112, 128, 184, 168, 48, false, 120},
    {0x030c0000, 56, true, 0, 0, 8, 56, 70, 112, 128, 192, 176, 40, true, 104},
    {0x030d0000, 72, false, 0, 0, 8, 56, 70, 112, 128, 200, 184, 40, true, 120},
};
// The same in every version with a layout (3.11 to 3.13): PyTypeObject, PyTupleObject,
// PyBaseExceptionObject, PyTracebackObject and PyFrameObject fields.
constexpr size_t kTypeName = 24, kTypeFlags = 168, kTupleSize = 16, kTupleItems = 24;
constexpr size_t kExceptionArgs = 24, kExceptionTraceback = 40;
constexpr size_t kTracebackFrame = 24, kTracebackLasti = 32, kTracebackLine = 36;
constexpr size_t kFrameObjectFrame = 24;
constexpr unsigned long kBaseExceptionSubclass = 1ul << 30;
constexpr char kOwnedByGenerator = 1, kOwnedByCStack = 3;
constexpr size_t kObjectType = 8, kStringLength = 16, kStringState = 32;
constexpr unsigned kCompactBit = 1u << 5, kAsciiBit = 1u << 6;
constexpr size_t kMaxWalk = 256;  // frames looked at, skipped ones included

struct Python {
  int (*is_initialized)() = nullptr;
  int (*gil_check)() = nullptr;
  void* (*this_thread_state)() = nullptr;
  int (*addr_to_line)(void* code, int byte_offset) = nullptr;
  const void* code_type = nullptr;
  const void* unicode_type = nullptr;
  const void* tuple_type = nullptr;
  const void* traceback_type = nullptr;
  const void* frame_type = nullptr;
  const Layout* layout = nullptr;
  // The stable API, for versions without a known layout.
  void* (*eval_get_frame)() = nullptr;
  void* (*frame_get_code)(void*) = nullptr;
  int (*frame_get_line)(void*) = nullptr;
  void* (*frame_get_back)(void*) = nullptr;
  void* (*get_attr)(void*, const char*) = nullptr;
  const char* (*as_utf8)(void*) = nullptr;
  void (*err_fetch)(void**, void**, void**) = nullptr;
  void (*err_restore)(void*, void*, void*) = nullptr;
  void (*decref)(void*) = nullptr;
  bool stable = false;
};

template <class F>
void look_up(F& fn, const char* name) {
  fn = reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
}

Python attach() {
  Python py;
  look_up(py.is_initialized, "Py_IsInitialized");
  look_up(py.gil_check, "PyGILState_Check");
  look_up(py.this_thread_state, "PyGILState_GetThisThreadState");
  look_up(py.addr_to_line, "PyCode_Addr2Line");
  py.code_type = dlsym(RTLD_DEFAULT, "PyCode_Type");
  py.unicode_type = dlsym(RTLD_DEFAULT, "PyUnicode_Type");
  py.tuple_type = dlsym(RTLD_DEFAULT, "PyTuple_Type");
  py.traceback_type = dlsym(RTLD_DEFAULT, "PyTraceBack_Type");
  py.frame_type = dlsym(RTLD_DEFAULT, "PyFrame_Type");
  const auto* version = static_cast<const unsigned long*>(dlsym(RTLD_DEFAULT, "Py_Version"));
  if (py.is_initialized == nullptr || py.gil_check == nullptr || py.code_type == nullptr ||
      py.unicode_type == nullptr) {
    py.is_initialized = nullptr;  // not CPython
    return py;
  }
  if (version != nullptr && py.this_thread_state != nullptr && py.addr_to_line != nullptr) {
    for (const Layout& layout : kLayouts)
      if ((*version & 0xffff0000ul) == layout.version) py.layout = &layout;
  }
  look_up(py.eval_get_frame, "PyEval_GetFrame");
  look_up(py.frame_get_code, "PyFrame_GetCode");
  look_up(py.frame_get_line, "PyFrame_GetLineNumber");
  look_up(py.frame_get_back, "PyFrame_GetBack");
  look_up(py.get_attr, "PyObject_GetAttrString");
  look_up(py.as_utf8, "PyUnicode_AsUTF8");
  look_up(py.err_fetch, "PyErr_Fetch");
  look_up(py.err_restore, "PyErr_Restore");
  look_up(py.decref, "Py_DecRef");
  py.stable = py.eval_get_frame && py.frame_get_code && py.frame_get_line && py.frame_get_back &&
              py.get_attr && py.as_utf8 && py.err_fetch && py.err_restore && py.decref;
  return py;
}

Python& python_state() {
  static Python py = attach();
  return py;
}
const Python& python() { return python_state(); }
bool g_force_stable = false;

template <class T>
T read_at(const void* base, size_t offset) {
  T value;
  std::memcpy(&value, static_cast<const char*>(base) + offset, sizeof(T));
  return value;
}

// Per thread: which (code object, instruction, file) this thread already wrote as a 'y'
// record in the current trace. Direct-mapped like StackCache: a collision defines again.
struct FrameKey {
  uintptr_t code = 0;
  uintptr_t file = 0;
  int64_t position = 0;  // instruction offset (layout walk) or line (stable walk)
  bool operator==(const FrameKey&) const = default;
};
struct ThreadFrames {
  static constexpr size_t kSlots = 512;
  uint64_t generation = 0;
  FrameKey keys[kSlots];
  uint32_t ids[kSlots] = {};
};
thread_local ThreadFrames t_frames;
std::atomic<uint32_t> g_next_id{1};

size_t slot_of(const FrameKey& key) {
  uint64_t h = key.code * 0x9e3779b97f4a7c15ull ^ static_cast<uint64_t>(key.position) ^
               (key.file >> 4) * 0xc2b2ae3d27d4eb4full;
  h ^= h >> 29;
  return h % ThreadFrames::kSlots;
}

// Returns the id of `key`, writing the record (with what `describe` tells) when it is new.
template <class Describe>
uint32_t frame_id(const FrameKey& key, trace::TraceWriter& writer, Describe describe) {
  const size_t slot = slot_of(key);
  if (t_frames.ids[slot] != 0 && t_frames.keys[slot] == key) return t_frames.ids[slot];
  const uint32_t id = g_next_id.fetch_add(1, std::memory_order_relaxed);
  std::string_view file, function;
  uint32_t line = 0;
  describe(file, function, line);
  writer.write_python_frame(id, line, file, function);
  t_frames.keys[slot] = key;
  t_frames.ids[slot] = id;
  return id;
}

// A compact ASCII str's bytes, read in place; anything else is not read.
std::string_view ascii_of(const Python& py, const void* object) {
  if (object == nullptr || read_at<const void*>(object, kObjectType) != py.unicode_type) {
    return "?";
  }
  const auto state = read_at<uint32_t>(object, kStringState);
  if ((state & kCompactBit) == 0 || (state & kAsciiBit) == 0) return "<non-ascii>";
  const auto length = read_at<int64_t>(object, kStringLength);
  if (length < 0) return "?";
  return {static_cast<const char*>(object) + py.layout->ascii_data, static_cast<size_t>(length)};
}

const void* type_of(const void* object) { return read_at<const void*>(object, kObjectType); }

// The exception this thread is handling (what sys.exception() returns: set while an `except` or
// a `with` statement's __exit__ runs for it), as the pseudo frame trace::kPythonExceptionFile:
// function "Type: first line of its message", line where it passed through the frame handling it
// (its traceback's first entry). 0 when there is none or it cannot be read.
uint32_t exception_frame(const Python& py, const void* thread, trace::TraceWriter& writer) {
  const Layout& l = *py.layout;
  const void* item = read_at<const void*>(thread, l.thread_exc_info);
  const void* exception = item != nullptr ? read_at<const void*>(item, 0) : nullptr;
  if (exception == nullptr) return 0;
  const void* type = type_of(exception);
  if (type == nullptr || (read_at<unsigned long>(type, kTypeFlags) & kBaseExceptionSubclass) == 0)
    return 0;  // None: nothing handled
  const void* traceback = read_at<const void*>(exception, kExceptionTraceback);
  if (traceback != nullptr && type_of(traceback) != py.traceback_type) traceback = nullptr;
  const FrameKey key{reinterpret_cast<uintptr_t>(exception), reinterpret_cast<uintptr_t>(traceback),
                     -1};
  return frame_id(key, writer, [&](std::string_view& f, std::string_view& fn, uint32_t& line) {
    thread_local char text[320];
    size_t n = 0;
    auto append = [&](std::string_view part) {
      for (char c : part) {
        if (n + 1 >= sizeof text || c == '\n') return false;
        text[n++] = c;
      }
      return true;
    };
    const char* name = read_at<const char*>(type, kTypeName);
    append(name != nullptr ? std::string_view(name, strnlen(name, 96)) : "?");
    const void* args = read_at<const void*>(exception, kExceptionArgs);
    if (args != nullptr && type_of(args) == py.tuple_type &&
        read_at<int64_t>(args, kTupleSize) >= 1) {
      const std::string_view message = ascii_of(py, read_at<const void*>(args, kTupleItems));
      if (message != "?" && !message.empty()) append(": ") && append(message);
    }
    f = trace::kPythonExceptionFile;
    fn = std::string_view(text, n);
    line = 0;
    if (traceback == nullptr) return;
    int number = read_at<int>(traceback, kTracebackLine);  // -1 until asked (3.12, 3.13)
    const void* frame = read_at<const void*>(traceback, kTracebackFrame);
    if (number <= 0 && frame != nullptr && type_of(frame) == py.frame_type) {
      const void* data = read_at<const void*>(frame, kFrameObjectFrame);
      const void* code = data != nullptr ? read_at<const void*>(data, l.frame_code) : nullptr;
      if (code != nullptr && type_of(code) == py.code_type)
        number = py.addr_to_line(const_cast<void*>(code), read_at<int>(traceback, kTracebackLasti));
    }
    line = number > 0 ? static_cast<uint32_t>(number) : 0;
  });
}

size_t walk_layout(const Python& py, uint32_t* ids, size_t capacity, trace::TraceWriter& writer,
                   bool handled_exception) {
  const Layout& l = *py.layout;
  const void* thread = py.this_thread_state();
  if (thread == nullptr) return 0;  // a thread Python never ran on
  size_t depth = 0;
  if (handled_exception && capacity > 0)
    if (const uint32_t id = exception_frame(py, thread, writer)) ids[depth++] = id;
  const void* frame = read_at<const void*>(thread, l.thread_frame_holder);
  if (l.through_cframe && frame != nullptr) {
    frame = read_at<const void*>(frame, l.cframe_current_frame);
  }
  for (size_t walked = 0; frame != nullptr && depth < capacity && walked < kMaxWalk; ++walked) {
    const char owner = read_at<char>(frame, l.frame_owner);
    const void* next = read_at<const void*>(frame, l.frame_previous);
    if (l.has_cstack_owner && owner == kOwnedByCStack) {  // an entry shim, not code (3.13: None)
      frame = next;
      continue;
    }
    const void* code = read_at<const void*>(frame, l.frame_code);
    if (code == nullptr || read_at<const void*>(code, kObjectType) != py.code_type) break;
    const auto* bytecode = static_cast<const char*>(code) + l.code_bytecode;
    const auto* instr = read_at<const char*>(frame, l.frame_instr);
    const int64_t offset = instr - bytecode;  // bytes; code units are 2 bytes
    const bool incomplete = owner != kOwnedByGenerator &&
                            offset < 2 * int64_t{read_at<int32_t>(code, l.code_first_traceable)};
    if (!incomplete) {
      const void* file = read_at<const void*>(code, l.code_filename);
      const FrameKey key{reinterpret_cast<uintptr_t>(code), reinterpret_cast<uintptr_t>(file),
                         offset};
      ids[depth++] =
          frame_id(key, writer, [&](std::string_view& f, std::string_view& fn, uint32_t& line) {
            f = ascii_of(py, file);
            fn = ascii_of(py, read_at<const void*>(code, l.code_qualname));
            const int n = py.addr_to_line(const_cast<void*>(code), static_cast<int>(offset));
            line = n > 0 ? static_cast<uint32_t>(n) : 0;
          });
    }
    frame = next;
  }
  return depth;
}

// The stable API, GIL held. Every new reference is released; the exception state is kept.
size_t walk_stable(const Python& py, uint32_t* ids, size_t capacity, trace::TraceWriter& writer) {
  void *type = nullptr, *value = nullptr, *traceback = nullptr;
  py.err_fetch(&type, &value, &traceback);
  void* frame = py.eval_get_frame();  // borrowed
  void* owned = nullptr;              // the reference PyFrame_GetBack gave us
  size_t depth = 0;
  while (frame != nullptr && depth < capacity) {
    void* code = py.frame_get_code(frame);
    const int line = py.frame_get_line(frame);
    void* file = py.get_attr(code, "co_filename");
    const FrameKey key{reinterpret_cast<uintptr_t>(code), reinterpret_cast<uintptr_t>(file), line};
    void* name = nullptr;  // released after the record, which is written from its text
    ids[depth++] =
        frame_id(key, writer, [&](std::string_view& f, std::string_view& fn, uint32_t& n) {
          const char* file_text = file != nullptr ? py.as_utf8(file) : nullptr;
          name = py.get_attr(code, "co_qualname");
          if (name == nullptr) name = py.get_attr(code, "co_name");
          const char* name_text = name != nullptr ? py.as_utf8(name) : nullptr;
          f = file_text != nullptr ? file_text : "?";
          fn = name_text != nullptr ? name_text : "?";
          n = line > 0 ? static_cast<uint32_t>(line) : 0;
        });
    if (name != nullptr) py.decref(name);
    if (file != nullptr) py.decref(file);
    py.decref(code);
    void* back = py.frame_get_back(frame);
    if (owned != nullptr) py.decref(owned);
    owned = back;
    frame = back;
  }
  if (owned != nullptr) py.decref(owned);
  py.err_restore(type, value, traceback);  // also clears anything our calls left set
  return depth;
}

}  // namespace

bool python_frames_available() {
  const Python& py = python();
  return py.is_initialized != nullptr && (py.layout != nullptr || py.stable);
}

size_t capture_python_frames(uint32_t* ids, size_t capacity, trace::TraceWriter& writer,
                             uint64_t generation, bool handled_exception) {
  const Python& py = python();
  if (py.is_initialized == nullptr || py.is_initialized() == 0) return 0;
  if (t_frames.generation != generation) {  // a new trace: its records are not written yet
    for (uint32_t& id : t_frames.ids) id = 0;
    t_frames.generation = generation;
  }
  if (py.layout != nullptr && !g_force_stable)
    return walk_layout(py, ids, capacity, writer, handled_exception);
  if (py.stable && py.gil_check() == 1) return walk_stable(py, ids, capacity, writer);
  return 0;
}

void reattach_python_for_testing(bool force_stable_api) {
  python_state() = attach();
  g_force_stable = force_stable_api;
}

}  // namespace capguard::interposer
