/* Built for a future ABI major: the host must refuse it naming both versions. */
#include "broken_common.h"

PG_PLUGIN_EXPORT const pg_plugin* pg_plugin_entry(void) {
  static pg_plugin table;
  table = broken_table("broken_abi_major", "broken_abi_major");
  table.abi_major = 2;
  return &table;
}
