// A deliberately wrong plugin: it wraps the template plugin (loaded from
// POLYGRAD_TEMPLATE_PATH) and breaks exactly one thing, chosen at compile time, so the tests
// can prove that the conformance kit notices:
//   POLYGRAD_FAULT_ADD_SUBTRACTS         the renderer turns every ADD into SUB
//   POLYGRAD_FAULT_COPY_OUT_CORRUPTS     copy_out flips a bit in the middle of the data
//   POLYGRAD_FAULT_ACCEPTS_OTHER_MAJOR   init accepts a host of another ABI major
//   POLYGRAD_FAULT_STORE_ONE_LANE        a STORE of a vector writes only its first lane (the
//                                        renderer that read STORE's vcount as 1)
//   POLYGRAD_FAULT_WMMA_SWAPS_AB         WMMA computes B * A + C (its first two sources swapped)
//   POLYGRAD_FAULT_LACKS_INT64           the device leaves int64 out of its dtype_mask (not a
//                                        fault of the code: a plugin that lacks what the host
//                                        needs, which the kit and the host must name)
#include <polygrad/plugin.h>

#include <dlfcn.h>

#include <cstddef>
#include <cstring>
#include <utility>
#include <vector>

namespace {

const pg_plugin* inner() {
  static const pg_plugin* table = [] {
    void* library = dlopen(POLYGRAD_TEMPLATE_PATH, RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) return static_cast<const pg_plugin*>(nullptr);
    auto entry = reinterpret_cast<pg_plugin_entry_fn>(dlsym(library, PG_PLUGIN_ENTRY_NAME));
    return entry ? entry() : nullptr;
  }();
  return table;
}

#if defined(POLYGRAD_FAULT_ADD_SUBTRACTS)
pg_status render(pg_device_t d, const pg_kernel_program* p, pg_byte_sink* out, pg_error* err) {
  if (p == nullptr || p->instructions == nullptr) return inner()->renderer->render(d, p, out, err);
  std::vector<pg_instruction> code(p->instructions, p->instructions + p->instruction_count);
  for (pg_instruction& in : code)
    if (in.op == PG_OP_ADD) in.op = PG_OP_SUB;
  pg_kernel_program wrong = *p;
  wrong.instructions = code.data();
  return inner()->renderer->render(d, &wrong, out, err);
}
#elif defined(POLYGRAD_FAULT_WMMA_SWAPS_AB)
pg_status render(pg_device_t d, const pg_kernel_program* p, pg_byte_sink* out, pg_error* err) {
  if (p == nullptr || p->instructions == nullptr || p->operands == nullptr)
    return inner()->renderer->render(d, p, out, err);
  std::vector<uint32_t> operands(p->operands, p->operands + p->operand_count);
  for (uint32_t i = 0; i < p->instruction_count; ++i) {
    const pg_instruction& in = p->instructions[i];
    if (in.op == PG_OP_WMMA && in.src_count == 3 && in.src_start + 3u <= p->operand_count)
      std::swap(operands[in.src_start], operands[in.src_start + 1]);
  }
  pg_kernel_program wrong = *p;
  wrong.operands = operands.data();
  return inner()->renderer->render(d, &wrong, out, err);
}
#elif defined(POLYGRAD_FAULT_STORE_ONE_LANE)
/// The program with each STORE of a vector value storing GEP(value, 0) instead.
pg_status render(pg_device_t d, const pg_kernel_program* p, pg_byte_sink* out, pg_error* err) {
  if (p == nullptr || p->instructions == nullptr || p->operands == nullptr)
    return inner()->renderer->render(d, p, out, err);
  std::vector<pg_instruction> code;
  std::vector<uint32_t> operands, moved(p->instruction_count);  // old index -> new
  for (uint32_t i = 0; i < p->instruction_count; ++i) {
    pg_instruction in = p->instructions[i];
    if (in.src_start + uint64_t{in.src_count} > p->operand_count)
      return inner()->renderer->render(d, p, out, err);  // malformed: let the template say so
    std::vector<uint32_t> srcs(p->operands + in.src_start,
                               p->operands + in.src_start + in.src_count);
    for (uint32_t& s : srcs) {
      if (s >= i) return inner()->renderer->render(d, p, out, err);  // malformed: likewise
      s = moved[s];
    }
    if (in.op == PG_OP_STORE && srcs.size() >= 2 && code[srcs[1]].vcount > 1) {
      pg_instruction lane0{};
      lane0.op = PG_OP_GEP;
      lane0.dtype = code[srcs[1]].dtype;
      lane0.vcount = 1;
      lane0.src_start = static_cast<uint32_t>(operands.size());
      lane0.src_count = 1;
      operands.push_back(srcs[1]);
      code.push_back(lane0);
      srcs[1] = static_cast<uint32_t>(code.size() - 1);
      in.vcount = 1;
    }
    in.src_start = static_cast<uint32_t>(operands.size());
    operands.insert(operands.end(), srcs.begin(), srcs.end());
    moved[i] = static_cast<uint32_t>(code.size());
    code.push_back(in);
  }
  pg_kernel_program wrong = *p;
  wrong.instructions = code.data();
  wrong.instruction_count = static_cast<uint32_t>(code.size());
  wrong.operands = operands.data();
  wrong.operand_count = static_cast<uint32_t>(operands.size());
  return inner()->renderer->render(d, &wrong, out, err);
}
#elif defined(POLYGRAD_FAULT_LACKS_INT64)
pg_status device_properties(pg_device_t d, pg_device_properties* props, pg_error* err) {
  pg_status s = inner()->device_properties(d, props, err);
  const size_t mask_end = offsetof(pg_capabilities, dtype_mask) + sizeof(uint64_t);
  if (s == PG_OK && props->struct_size >= offsetof(pg_device_properties, caps) + mask_end &&
      props->caps.struct_size >= mask_end)
    props->caps.dtype_mask &= ~(uint64_t{1} << PG_DTYPE_INT64);
  return s;
}
#elif defined(POLYGRAD_FAULT_COPY_OUT_CORRUPTS)
pg_status copy_out(pg_device_t d, void* dst, pg_buffer_t src, uint64_t off, uint64_t n,
                   pg_error* err) {
  pg_status s = inner()->allocator->copy_out(d, dst, src, off, n, err);
  if (s == PG_OK && n > 2) static_cast<unsigned char*>(dst)[n / 2] ^= 0x40;
  return s;
}
#elif defined(POLYGRAD_FAULT_ACCEPTS_OTHER_MAJOR)
pg_status init(const pg_host_services* host, pg_plugin_state_t* state, pg_error* err) {
  if (host == nullptr || host->abi_major == PG_PLUGIN_ABI_MAJOR)
    return inner()->init(host, state, err);
  static std::vector<pg_host_services> kept;  // lives for the process, as host tables do
  kept.reserve(16);
  if (kept.size() == kept.capacity()) return PG_ERR_INTERNAL;
  pg_host_services* patched = &kept.emplace_back(*host);
  patched->abi_major = PG_PLUGIN_ABI_MAJOR;
  patched->struct_size = sizeof(pg_host_services);
  return inner()->init(patched, state, err);
}
#endif

}  // namespace

extern "C" PG_PLUGIN_EXPORT const pg_plugin* PG_PLUGIN_ENTRY(void) {
  static pg_plugin table;
  static pg_allocator_api allocator;
  static pg_renderer_api renderer;
  static bool ready = false;
  if (!ready) {
    if (inner() == nullptr) return nullptr;
    table = *inner();
    allocator = *inner()->allocator;
    renderer = *inner()->renderer;
    table.name = "faulty";
    table.allocator = &allocator;
    table.renderer = &renderer;
#if defined(POLYGRAD_FAULT_ADD_SUBTRACTS) || defined(POLYGRAD_FAULT_STORE_ONE_LANE) || \
    defined(POLYGRAD_FAULT_WMMA_SWAPS_AB)
    renderer.render = &render;
#elif defined(POLYGRAD_FAULT_LACKS_INT64)
    table.device_properties = &device_properties;
#elif defined(POLYGRAD_FAULT_COPY_OUT_CORRUPTS)
    allocator.copy_out = &copy_out;
#elif defined(POLYGRAD_FAULT_ACCEPTS_OTHER_MAJOR)
    table.init = &init;
#endif
    ready = true;
  }
  return &table;
}
