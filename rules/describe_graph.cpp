// Wording shared by the graph-lifetime rules.
#include <cxxabi.h>
#include <fmt/format.h>

#include <cstdlib>

#include "rules/rule.h"
#include "util/cpp_names.h"

namespace capguard::rules {

std::string kernel_name(std::string_view mangled) {
  if (mangled.empty()) return "a kernel";
  const std::string name(mangled);
  int status = 0;
  char* out = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  std::string result = status == 0 && out != nullptr ? std::string(out) : name;
  std::free(out);
  // A library kernel's full name (cuBLAS's, PyTorch's elementwise kernels) runs to hundreds of
  // characters of template arguments, several times per message: read as its short name.
  constexpr size_t kLongName = 60;
  if (result.size() > kLongName) result = short_kernel_name(result);
  return result;
}

std::string describe_exec(const ExecState& exec) {
  std::string text = fmt::format("graph exec #{} ({})", exec.serial, hex(exec.handle));
  if (exec.capture != nullptr) text += fmt::format(", captured by capture #{}", exec.capture->id);
  return text;
}

std::string describe_node_ref(const ExecState& exec, const NodeRef& ref) {
  const GraphNodeInfo* node = ref.node < exec.nodes.size() ? &exec.nodes[ref.node] : nullptr;
  const std::string where = node != nullptr && node->depth > 0 ? " (in a child graph)" : "";
  if (ref.role == 'a') {
    return fmt::format("kernel node {}{} (argument {})",
                       kernel_name(node != nullptr ? std::string_view(node->name) : ""), where,
                       ref.index);
  }
  const char* type = node != nullptr ? trace::graph_node_type_name(node->type) : "copy";
  return fmt::format("{} node{} ({})", type, where, ref.role == 's' ? "source" : "destination");
}

void add_exec_sites(Draft& draft, const ExecState& exec) {
  draft.related.push_back(
      {"instantiate", fmt::format("{} instantiated here", describe_exec(exec)), exec.instantiate});
  if (exec.capture != nullptr) {
    draft.capture = exec.capture.get();
    add_capture_begin(draft, *exec.capture);
  }
}

}  // namespace capguard::rules
