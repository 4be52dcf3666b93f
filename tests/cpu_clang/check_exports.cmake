# cmake -DNM=<nm> -DPLUGIN=<plugin.so> -P check_exports.cmake
# Fails unless the plugin's dynamic symbol table defines exactly one symbol: pg_plugin_entry.
execute_process(COMMAND ${NM} -D --defined-only ${PLUGIN}
                OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm failed on ${PLUGIN}")
endif()
string(STRIP "${out}" out)
string(REPLACE "\n" ";" lines "${out}")
list(LENGTH lines count)
if(NOT count EQUAL 1 OR NOT out MATCHES " T pg_plugin_entry$")
  message(FATAL_ERROR "${PLUGIN} exports ${count} symbols, want only pg_plugin_entry:\n${out}")
endif()
