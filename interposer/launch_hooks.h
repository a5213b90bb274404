// Kernel launches without CUPTI. CUPTI's callbacks on the launch entry points cost a
// capture of 1000 kernels about twice its native time; with every other callback on and those
// off, CUPTI costs nothing measurable there. So libcapguard.so hands the program trampolines for
// the launch entry points of launch_hooks.def, and while the callback gate has everything on
// (callback_gate.h: a capture or rehearsal open, or lingering after one) they deliver each
// launch to the recorder exactly as CUPTI's callback would have: same switchboard, same
// callback data, ENTER before the call and EXIT after it. Outside that they call straight
// through, as CUPTI's switched-off callbacks did.
//
// How the program gets them (every way a launch entry point can be reached):
// - the runtime, static or shared, asks dlsym(libcuda, "cuGetProcAddress_v2") once and resolves
//   its whole driver table through that pointer; capguard's dlsym (driver_exports.cpp, the
//   preloaded library's) answers with a resolver that wraps the launch entry points. The
//   runtime first resolves cuGetProcAddress itself through it: that answer is a second resolver,
//   whose launches are delivered under the runtime's names (cudaLaunchKernel), as CUPTI's
//   runtime callback named them;
// - programs that dlsym each driver symbol (JAX) get the trampoline from dlsym;
// - programs linked against libcuda (CuPy, Triton's launcher) bind to libcapguard.so's own
//   exports of the same names.
// Not reached: a library loaded with RTLD_DEEPBIND that looks libcuda up itself (its own dlsym
// reference binds to libc's first), and dlvsym. Only when LD_PRELOAD put this library first does
// the rest hold (`launch_hooks_reach_program`);
// otherwise, or when CUPTI refuses to switch the launch callbacks off, CUPTI keeps delivering
// launches as before. CAPGUARD_LAUNCH_HOOKS=0 keeps them on CUPTI too.
//
// No lock and no allocation on any path; nothing here judges a launch.
#pragma once

#include <cupti.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace capguard::interposer::launch_hooks {

// From the constructor of an active capguard (CAPGUARD_TRACE_DIR set): start wrapping what the
// program resolves. `self_start`/`self_end`: this library's code, whose own lookups go through.
void enable(uint64_t self_start, uint64_t self_end);
bool enabled();

// The resolver handed out for dlsym(..., "cuGetProcAddress_v2" or "cuGetProcAddress"), or the
// trampoline for a launch symbol; `found` is what the real dlsym returned, `caller` the return
// address of the dlsym call. Null when the answer is `found` itself.
void* answer_dlsym(const char* name, void* found, const void* caller);

// Where and when launches are delivered. `deliver` is called as CUPTI calls a subscriber's
// callback; `delivering` is raised by the gate while it has everything on. `on_open_origin`
// says whether a launch (callback id and params as delivered) goes to the origin stream of an
// open capture: the capture's body, which the recorder drops when it succeeds, so that such a
// launch is made without delivering anything (a failed one is delivered after the call).
void deliver_to(CUpti_CallbackFunc deliver, void* userdata,
                bool (*on_open_origin)(void* userdata, CUpti_CallbackDomain, CUpti_CallbackId,
                                       const void* params));
std::atomic<bool>& delivering();
// A call made already, delivered where launches are as CUPTI's callback would have delivered it:
// ENTER, then EXIT with `result` (attach_guards.h: a synchronize that failed while CUPTI was
// detached). Nothing when deliver_to was never called.
void deliver_made_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const char* name,
                       const void* params, int32_t result);

// The hooks own the launch family: CUPTI's callbacks for it are switched off and, should one
// come anyway (while a domain is switched on whole), dropped. Taken at attach, given back when
// CUPTI refuses the switch.
void set_owning(bool owning);
bool owns(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);

// CUPTI's callback ids of the launch family (launch_hooks.def), runtime and driver.
const uint32_t* runtime_callback_ids(size_t& count);
const uint32_t* driver_callback_ids(size_t& count);

// A lookup the hooks did not answer: one made before `enable` (another library's constructor
// before this one's), of a name they wrap.
void note_lookup_before_enable(const char* name);
// How many launch entry points (or resolvers) reached the program unwrapped: looked up before
// `enable`, or handed out when every slot was taken (never seen). Then the hooks must not own
// the launches, and do not.
int unwrapped();

// The exports of driver_exports.cpp: a launch through them, driver-named.
CUresult export_launch_grid(int hook, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                            unsigned bx, unsigned by, unsigned bz, unsigned shared, CUstream stream,
                            void** params, void** extra);
CUresult export_launch_config(int hook, const CUlaunchConfig* config, CUfunction f, void** params,
                              void** extra);
CUresult export_launch_cooperative(int hook, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                   unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                   CUstream stream, void** params);

// The hooks' indexes, for the exports.
enum Hook : int {
#define CAPGUARD_LAUNCH_HOOK(driver, shape, runtime, runtime_cupti) k_##driver,
#include "interposer/launch_hooks.def"
  kHookCount
};

}  // namespace capguard::interposer::launch_hooks
