/* Claims a pg_plugin smaller than the ABI 1.0 table. */
#include <stddef.h>

#include "broken_common.h"

PG_PLUGIN_EXPORT const pg_plugin* pg_plugin_entry(void) {
  static pg_plugin table;
  table = broken_table("broken_small_table", "broken_small_table");
  table.struct_size = (uint32_t)offsetof(pg_plugin, init);
  return &table;
}
