/* init fails with a status and a message, as a plugin whose driver is broken would. */
#include "broken_common.h"

static pg_status failing_init(const pg_host_services* host, pg_plugin_state_t* state,
                              pg_error* err) {
  (void)host;
  (void)state;
  broken_set(err, "simulated driver failure: no broken accelerator attached");
  return PG_ERR_DEVICE;
}

PG_PLUGIN_EXPORT const pg_plugin* pg_plugin_entry(void) {
  static pg_plugin table;
  table = broken_table("broken_init_error", "broken_init_error");
  table.init = failing_init;
  return &table;
}
