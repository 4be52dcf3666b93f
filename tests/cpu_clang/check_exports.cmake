# cmake -DNM=<nm> -DPLUGIN=<plugin.so> [-DSYMBOL=<name>] -P check_exports.cmake
# Fails unless the plugin's dynamic symbol table defines exactly one symbol: SYMBOL, by default
# pg_plugin_entry.
execute_process(COMMAND ${NM} -D --defined-only ${PLUGIN}
                OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm failed on ${PLUGIN}")
endif()
if(NOT SYMBOL)
  set(SYMBOL pg_plugin_entry)
endif()
string(STRIP "${out}" out)
string(REPLACE "\n" ";" lines "${out}")
list(LENGTH lines count)
if(NOT count EQUAL 1 OR NOT out MATCHES " T ${SYMBOL}$")
  message(FATAL_ERROR "${PLUGIN} exports ${count} symbols, want only ${SYMBOL}:\n${out}")
endif()
