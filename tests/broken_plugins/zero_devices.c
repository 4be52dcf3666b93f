/* Loads fine but has no usable device, and says why. */
#include "broken_common.h"

static pg_status no_devices(pg_plugin_state_t state, uint32_t* count, pg_error* err) {
  (void)state;
  *count = 0;
  broken_set(err, "no broken accelerator present (zero devices by design)");
  return PG_OK;
}

PG_PLUGIN_EXPORT const pg_plugin* pg_plugin_entry(void) {
  static pg_plugin table;
  table = broken_table("broken_zero_devices", "zerodev");
  table.device_count = no_devices;
  return &table;
}
