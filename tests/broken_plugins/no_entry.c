/* Exports a misspelt entry point, so the host finds no pg_plugin_entry. */
#include "broken_common.h"

PG_PLUGIN_EXPORT const pg_plugin* pg_plugin_entry_v1(void) {
  static pg_plugin table;
  table = broken_table("broken_no_entry", "broken_no_entry");
  return &table;
}
