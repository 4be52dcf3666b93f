/* The entry point returns NULL instead of a table. */
#include "broken_common.h"

PG_PLUGIN_EXPORT const pg_plugin* pg_plugin_entry(void) {
  return NULL;
}
