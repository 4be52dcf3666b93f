/*
 * polygrad collective-communication (CCL) plugin SDK, ABI version 1 (minor 0).
 *
 * The contract between the polygrad host and a collective-communication plugin: a shared
 * library named polygrad_ccl_<name>.so that exports exactly one symbol, PG_CCL_ENTRY_NAME,
 * returning a pg_ccl_plugin table. It moves data between processes (ranks) over a transport
 * the site already runs (MPI, NCCL); it never renders or runs kernels.
 *
 * The rules are those of device plugins (plugin.h, docs/plugin-sdk.md):
 *  - C ABI only; no C++ exceptions or STL types cross the boundary.
 *  - Every table starts with its version or struct_size and is append-only; a reader uses
 *    PG_HAS_FIELD() before touching a field added after CCL ABI 1.0. Optional entries may be
 *    NULL (each is marked "optional").
 *  - Every fallible call returns a pg_status and, when not PG_OK, writes a message into the
 *    caller-owned pg_error. A collective never blocks forever: it fails with PG_ERR_PEER (a
 *    peer process died or left, the message names its rank) or PG_ERR_TIMEOUT (nothing came
 *    within the communicator's timeout, the message names the ranks waited for). After such a
 *    failure the communicator is broken: every later call fails at once, with the same status. The
 *    transport may still touch the memory of the failed call (an abandoned operation completes
 *    if a late peer arrives), so the caller keeps that memory allocated to the end of the
 *    process; the plugin does the same with its own staging memory.
 *  - A plugin calls the host only through pg_host_services, and a device plugin (to stage a
 *    device buffer through host memory) only through the device plugin's own tables, which the
 *    host hands it in pg_ccl_buffer.
 */
#ifndef POLYGRAD_CCL_H
#define POLYGRAD_CCL_H

#include <polygrad/plugin.h>

#ifdef __cplusplus
extern "C" {
#endif

/** CCL ABI major: a CCL plugin and host with different majors never load each other. */
#define PG_CCL_ABI_MAJOR 1
/** CCL ABI minor: grows when fields are appended. A host loads plugins of its minor or older. */
#define PG_CCL_ABI_MINOR 0

/** The one symbol a CCL plugin exports. */
#define PG_CCL_ENTRY_NAME "pg_ccl_entry"

/** Reductions of all_reduce and reduce_scatter. Passed as an int; any other value is
 *  PG_ERR_INVALID_ARGUMENT. */
typedef enum pg_ccl_reduce_op {
  PG_CCL_SUM = 0, /**< element-wise sum over the ranks */
  PG_CCL_MAX = 1, /**< element-wise maximum over the ranks */
  PG_CCL_MEAN = 2 /**< the sum divided by the world size (floating-point dtypes only) */
} pg_ccl_reduce_op;

/** Opaque handles owned by the CCL plugin. */
typedef struct pg_ccl_comm_s* pg_ccl_comm_t; /**< one communicator: a rank in a group */

/** How a communicator finds its peers. Owned by the caller; read during comm_init only. */
typedef struct pg_ccl_bootstrap {
  uint32_t struct_size; /**< sizeof(pg_ccl_bootstrap) of the caller */
  int32_t rank;         /**< this process' rank, 0 .. world_size-1 */
  int32_t world_size;   /**< number of ranks */
  uint32_t reserved;    /**< zero */
  /** Where to meet, in the plugin's terms: "" is the launcher's own rendezvous (mpirun's for
   *  MPI); a plugin that needs an address (a TCP store "host:port") says so in its error. */
  const char* address;
  /** Seconds a collective may wait for its peers before PG_ERR_TIMEOUT; <= 0: the plugin's
   *  default (its "timeout" option). */
  double timeout_seconds;
} pg_ccl_bootstrap;

/** One side of a collective: `bytes` of memory, on a device or on the host. Owned by the
 *  caller; read during the call. The buffer (or host memory) must hold the bytes the
 *  collective reads or writes, starting at `offset`. */
typedef struct pg_ccl_buffer {
  uint32_t struct_size; /**< sizeof(pg_ccl_buffer) of the caller */
  uint32_t reserved;    /**< zero */
  /** The device plugin whose buffer this is, or NULL for plain host memory (`host`). The CCL
   *  plugin reaches the memory through this table: its allocator's host_pointer where the
   *  device has one, else copy_out / copy_in (or the async table's copies on `stream`); a
   *  plugin over a vendor library that works on device memory (NCCL) takes the allocator's
   *  device_address (device ABI 1.4) where the device plugin gives one. */
  const pg_plugin* device_plugin;
  pg_device_t device; /**< the device of `buffer`; NULL with host memory */
  pg_buffer_t buffer; /**< device memory; NULL with host memory */
  void* host;         /**< host memory when buffer is NULL; ignored otherwise */
  uint64_t offset;    /**< bytes into `buffer` (or past `host`) where the data starts */
} pg_ccl_buffer;

/** What one communicator says about itself. */
typedef struct pg_ccl_comm_info {
  uint32_t struct_size; /**< sizeof(pg_ccl_comm_info) of the caller */
  int32_t rank;         /**< as the transport numbers this process */
  int32_t world_size;   /**< as the transport counts the group */
  uint32_t reserved;
  double timeout_seconds; /**< the timeout in force */
  char transport[128];    /**< e.g. "Open MPI v4.1.4" */
} pg_ccl_comm_info;

/** What PG_CCL_ENTRY_NAME returns: a static table. The host reads abi_major, abi_minor and
 *  struct_size before anything else and refuses a major it does not speak or a minor newer
 *  than its own.
 *
 *  Every collective takes `stream`, a stream of the buffers' device plugin (pg_async_api) or
 *  NULL. NULL: the buffers' device work that produced the data has finished (the host
 *  synchronises first) and the collective completes before returning. A stream: the plugin
 *  orders its work after what is enqueued on the stream (it may simply synchronise it), and
 *  the result is there for work enqueued on the stream after the call. Element counts are per
 *  rank where the entry says so; `dtype` is a pg_dtype. PG_ERR_UNSUPPORTED names a dtype or
 *  reduction the plugin cannot do. */
typedef struct pg_ccl_plugin {
  uint32_t abi_major;   /**< PG_CCL_ABI_MAJOR the plugin was built with */
  uint32_t abi_minor;   /**< PG_CCL_ABI_MINOR the plugin was built with */
  uint32_t struct_size; /**< sizeof(pg_ccl_plugin) the plugin was built with */
  uint32_t reserved;
  const char* name;              /**< plugin name, e.g. "mpi" (the file is polygrad_ccl_mpi.so) */
  const char* version;           /**< the plugin's own version, e.g. "0.1.0" */
  const pg_option_desc* options; /**< option schema (YAML key ccl.<name>); option_count entries */
  uint32_t option_count;
  uint32_t reserved2;
  /** Initialise. Cheap: no transport is started here (that is comm_init's work). On failure
   *  the host reports err and never calls the plugin again. */
  pg_status (*init)(const pg_host_services* host, pg_plugin_state_t* state, pg_error* err);
  /** Optional. Release the state once the host's registry and every communicator of the
   *  plugin are gone (the host's process-wide registry lives to the end of the process). The
   *  library is never unloaded. */
  void (*shutdown)(pg_plugin_state_t state);
  /** Whether this process can make a communicator now: *usable = 1, or 0 with the reason in
   *  err (e.g. "not started by mpirun", "no CUDA driver"). Shown in the load report. */
  pg_status (*probe)(pg_plugin_state_t state, uint32_t* usable, pg_error* err);
  /** Join the group `bootstrap` describes. Collective: every rank calls it; it fails (no
   *  hang) when the transport's own numbering disagrees with bootstrap's rank or world size,
   *  or when the peers do not come within the timeout. */
  pg_status (*comm_init)(pg_plugin_state_t state, const pg_ccl_bootstrap* bootstrap,
                         pg_ccl_comm_t* out, pg_error* err);
  /** Leave the group and free the communicator. NULL is ignored. Not collective. */
  void (*comm_destroy)(pg_ccl_comm_t comm);
  /** Fill `info` (the caller sets info->struct_size). */
  pg_status (*comm_info)(pg_ccl_comm_t comm, pg_ccl_comm_info* info, pg_error* err);
  /** recv[i] = op over the ranks of send[i], for count elements; every rank gets the result.
   *  send and recv may be the same memory (in place). */
  pg_status (*all_reduce)(pg_ccl_comm_t comm, const pg_ccl_buffer* send, const pg_ccl_buffer* recv,
                          uint64_t count, uint32_t dtype, uint32_t op, pg_stream_t stream,
                          pg_error* err);
  /** recv = root's send (count elements) on every rank; `send` is read on root only (it may be
   *  NULL elsewhere). */
  pg_status (*broadcast)(pg_ccl_comm_t comm, const pg_ccl_buffer* send, const pg_ccl_buffer* recv,
                         uint64_t count, uint32_t dtype, int32_t root, pg_stream_t stream,
                         pg_error* err);
  /** recv (world_size * count elements) = the ranks' send (count each), in rank order. */
  pg_status (*all_gather)(pg_ccl_comm_t comm, const pg_ccl_buffer* send, const pg_ccl_buffer* recv,
                          uint64_t count, uint32_t dtype, pg_stream_t stream, pg_error* err);
  /** recv (count elements) = op over the ranks of block `rank` of send (world_size * count
   *  elements, in rank order). */
  pg_status (*reduce_scatter)(pg_ccl_comm_t comm, const pg_ccl_buffer* send,
                              const pg_ccl_buffer* recv, uint64_t count, uint32_t dtype,
                              uint32_t op, pg_stream_t stream, pg_error* err);
  /** Returns when every rank has called it (or fails with PG_ERR_PEER / PG_ERR_TIMEOUT). */
  pg_status (*barrier)(pg_ccl_comm_t comm, pg_error* err);
} pg_ccl_plugin;

/** Type of the entry point. */
typedef const pg_ccl_plugin* (*pg_ccl_entry_fn)(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* POLYGRAD_CCL_H */
