/* Built for ABI 1.99, newer than any host that exists: refused naming both versions. */
#include "broken_common.h"

PG_PLUGIN_EXPORT const pg_plugin* pg_plugin_entry(void) {
  static pg_plugin table;
  table = broken_table("broken_abi_minor", "broken_abi_minor");
  table.abi_minor = 99;
  return &table;
}
