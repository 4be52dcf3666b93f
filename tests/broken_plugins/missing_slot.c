/* Leaves a required slot (the renderer) NULL. */
#include "broken_common.h"

PG_PLUGIN_EXPORT const pg_plugin* pg_plugin_entry(void) {
  static pg_plugin table;
  table = broken_table("broken_missing_slot", "broken_missing_slot");
  table.renderer = NULL;
  return &table;
}
