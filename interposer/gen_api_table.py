#!/usr/bin/env python3
"""Generates interposer/api_table_<major>.inc from CUPTI's callback-id and parameter-struct headers.

One entry per runtime and driver callback id: the API's kind (from trace/api_catalog.def, the
list the analyzer classifies by too) and where the parameters that matter for capture sit in its params struct. The C++ side turns
the member names into offsets with offsetof, so the compiler checks every name.

    python3 interposer/gen_api_table.py /usr/local/cuda/include > interposer/api_table_13.inc
    python3 interposer/gen_api_table.py CUDA12_CUPTI_INCLUDE > interposer/api_table_12.inc
    python3 interposer/gen_api_table.py --check-majors CUDA12_CUPTI_INCLUDE /usr/local/cuda/include

One table per supported CUDA major. --check-majors checks what the interposer's lookup
relies on (api_table.h): a callback id names the same function in both releases, so that an id
one release has no params struct for may be decoded by the other's.
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CATALOG = os.path.join(HERE, "..", "trace", "api_catalog.def")


def catalog():
    """Base name -> kind, from the one list of CUDA functions the analyzer reads too."""
    kinds = {}
    with open(CATALOG) as f:
        for name, kind in re.findall(r"^CAPGUARD_API\((\w+), (\w+), [SN]\)", f.read(), re.M):
            kinds[name] = kind
    return kinds


def memory_catalog():
    """Base name -> (op, pointer member, out?, size member or None): the catalog's memory column."""
    memory = {}
    with open(CATALOG) as f:
        for name, op, pointer, direction, size in re.findall(
                r"^CAPGUARD_API_MEMORY\((\w+), (\w+), (\w+), (In|Out), (\w+)\)", f.read(), re.M):
            memory[name] = (op, pointer, direction == "Out", None if size == "_" else size)
    return memory


# Internal runtime entry points whose return value is a cudaError_t; the other __cuda* ones
# return pointers or nothing, so their functionReturnValue must not be read as an error.
INTERNAL_WITH_ERROR = {"__cudaLaunchKernel", "__cudaPopCallConfiguration"}

# Parameter slots: (slot, types it accepts, pointer?, name pattern or None).
SLOTS = [
    ("Stream", {"cudaStream_t", "CUstream"}, False, None),
    ("OutStream", {"cudaStream_t", "CUstream"}, True, None),
    ("Event", {"cudaEvent_t", "CUevent"}, False, None),
    ("OutEvent", {"cudaEvent_t", "CUevent"}, True, None),
    ("Flags", {"unsignedint", "int"}, False, r"(?i)flags"),
    ("Mode", {"cudaStreamCaptureMode", "CUstreamCaptureMode"}, False, None),
    ("ModePtr", {"cudaStreamCaptureMode", "CUstreamCaptureMode"}, True, None),
    ("CopyKind", {"cudaMemcpyKind"}, False, None),
    ("Graph", {"cudaGraph_t", "CUgraph"}, False, None),
    ("OutGraph", {"cudaGraph_t", "CUgraph"}, True, None),
    ("GraphExec", {"cudaGraphExec_t", "CUgraphExec"}, False, None),
    ("OutGraphExec", {"cudaGraphExec_t", "CUgraphExec"}, True, None),
    ("Node", {"cudaGraphNode_t", "CUgraphNode"}, False, None),
    ("UpdateInfo", {"cudaGraphExecUpdateResultInfo", "CUgraphExecUpdateResultInfo"}, True, None),
    # cudaLaunchKernelExC / cuLaunchKernelEx: the stream is a member of the launch config.
    ("LaunchConfig", {"cudaLaunchConfig_t", "CUlaunchConfig"}, True, None),
]


def read(path):
    with open(path) as f:
        return f.read()


def cbids(text, prefix):
    out = []
    for name, value in re.findall(prefix + r"(\w+)\s*=\s*(\d+)", text):
        if name not in ("INVALID", "SIZE", "FORCE_INT"):
            out.append((int(value), name))
    return out


def structs(text):
    out = {}
    for name, body in re.findall(r"typedef struct (\w+)_params_st \{(.*?)\} \1_params;", text, re.S):
        members = []
        for decl in body.split(";"):
            decl = " ".join(decl.split())
            if not decl:
                continue
            m = re.match(r"(.*?)([\s\*]+)(\w+)$", decl)
            if not m:
                continue
            typ, stars, member = m.groups()
            pointer_depth = stars.count("*")
            typ = re.sub(r"\b(const|enum|struct)\b", "", typ).replace(" ", "")
            members.append((typ, pointer_depth, member))
        out[name] = members
    return out


def strip_version(name):
    return re.sub(r"_v\d+$", "", name)


def base_name(name):
    """As trace/api_kind.h's api_base_name; tests/interposer_api_table_test.cpp checks they agree."""
    return strip_version(re.sub(r"_pt(sz|ds)$", "", strip_version(name)))


def entry(domain, cbid, name, params, kinds, memories):
    base = base_name(name)
    kind = kinds.get(base, "Other")
    memory = memories.get(base)
    per_thread = 1 if re.search(r"_pt(sz|ds)", name) else 0
    returns_error = 0 if base.startswith("__cuda") and base not in INTERNAL_WITH_ERROR else 1
    fields = []
    if params is not None:
        for slot, types, pointer, pattern in SLOTS:
            if slot == "LaunchConfig" and kind != "Enqueue":  # occupancy queries take one too
                continue
            if slot == "Node" and kind != "GraphExecSetParams":  # read for those calls only
                continue
            for typ, depth, member in params:
                if typ in types and depth == (1 if pointer else 0) and (
                        pattern is None or re.fullmatch(pattern, member)):
                    fields.append(f"CG_OFF({name}, {member}, {slot})")
                    break
        if memory is not None:
            # Only the 64-bit forms: the old cuMemAlloc (v1) has 32-bit pointers and sizes.
            types = {m: (t, d) for t, d, m in params}
            _, pointer_member, out, size_member = memory
            if types.get(pointer_member) in (("void", 2 if out else 1),
                                             ("CUdeviceptr", 1 if out else 0)):
                fields.append(f"CG_OFF({name}, {pointer_member}, {'OutPtr' if out else 'Ptr'})")
            if types.get(size_member) == ("size_t", 0):
                fields.append(f"CG_OFF({name}, {size_member}, Size)")
    has_params = "1" if params is not None else "0"
    op = memory[0] if memory is not None else "None"
    return (f"CG_API({domain}, {cbid}, {name}, {kind}, {op}, {per_thread}, {returns_error}, "
            f"{has_params}{''.join(', ' + f for f in fields)})")


def check_majors(older, newer):
    """Same callback id, same function (modulo _vN suffixes) wherever both have params."""
    problems = 0
    for header, prefix, params_header in (
            ("cupti_runtime_cbid.h", "CUPTI_RUNTIME_TRACE_CBID_", "generated_cuda_runtime_api_meta.h"),
            ("cupti_driver_cbid.h", "CUPTI_DRIVER_TRACE_CBID_", "generated_cuda_meta.h")):
        old_ids = dict(cbids(read(f"{older}/{header}"), prefix))
        new_ids = dict(cbids(read(f"{newer}/{header}"), prefix))
        old_params = structs(read(f"{older}/{params_header}"))
        new_params = structs(read(f"{newer}/{params_header}"))
        for cbid in sorted(set(old_ids) & set(new_ids)):
            a, b = old_ids[cbid], new_ids[cbid]
            if a in old_params and b in new_params and base_name(a) != base_name(b):
                print(f"callback id {cbid}: {a} in {older}, {b} in {newer}", file=sys.stderr)
                problems += 1
    return problems


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--check-majors":
        problems = check_majors(sys.argv[2], sys.argv[3])
        print(f"gen_api_table: {problems} callback ids name different functions")
        sys.exit(1 if problems else 0)
    inc = sys.argv[1] if len(sys.argv) > 1 else "/usr/local/cuda/include"
    runtime_params = structs(read(f"{inc}/generated_cuda_runtime_api_meta.h"))
    driver_params = structs(read(f"{inc}/generated_cuda_meta.h"))
    kinds = catalog()
    memories = memory_catalog()
    print("// Generated by interposer/gen_api_table.py from the CUPTI headers and "
          "trace/api_catalog.def. Do not edit.")
    print("// CG_API(domain, cbid, name, kind, memory, per_thread, returns_error, has_params, "
          "CG_OFF(name, member, slot)...)")
    for cbid, name in cbids(read(f"{inc}/cupti_runtime_cbid.h"), "CUPTI_RUNTIME_TRACE_CBID_"):
        print(entry("Runtime", cbid, name, runtime_params.get(name), kinds, memories))
    for cbid, name in cbids(read(f"{inc}/cupti_driver_cbid.h"), "CUPTI_DRIVER_TRACE_CBID_"):
        print(entry("Driver", cbid, name, driver_params.get(name), kinds, memories))


if __name__ == "__main__":
    main()
