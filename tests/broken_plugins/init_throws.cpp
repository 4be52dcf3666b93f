// init throws a C++ exception straight through the C boundary (a bug the host must survive).
#include <stdexcept>

#include "broken_common.h"

static pg_status throwing_init(const pg_host_services*, pg_plugin_state_t*, pg_error*) {
  throw std::runtime_error("init exploded on purpose");
}

extern "C" PG_PLUGIN_EXPORT const pg_plugin* pg_plugin_entry(void) {
  static pg_plugin table;
  table = broken_table("broken_init_throws", "broken_init_throws");
  table.init = throwing_init;
  return &table;
}
