/* A collective-communication plugin written in plain C against ccl.h alone, for the host's
 * tests: a world of one rank in this process. Each collective copies its input to its output
 * (what any reduction over one rank is) through the buffers' device plugin, so the host's
 * staging descriptors are exercised without MPI. A bootstrap address "fail:peer" or
 * "fail:timeout" makes every collective fail as a dead or silent peer would.
 * Built twice: as polygrad_ccl_loopback.so, and with PG_TEST_CCL_MAJOR=2 as a plugin the host
 * must refuse. */
#include <polygrad/ccl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PG_TEST_CCL_MAJOR
#define PG_TEST_CCL_MAJOR PG_CCL_ABI_MAJOR
#endif
#ifndef PG_TEST_CCL_NAME
#define PG_TEST_CCL_NAME "loopback"
#endif

typedef struct loop_comm {
  int fail; /* 0, or the pg_status every collective returns */
  double timeout;
} loop_comm;

static pg_status fail_with(pg_error* err, pg_status s, const char* message) {
  snprintf(err->message, sizeof(err->message), "%s", message);
  return s;
}

static pg_status init(const pg_host_services* host, pg_plugin_state_t* state, pg_error* err) {
  (void)host;
  (void)err;
  *state = NULL;
  return PG_OK;
}

static pg_status probe(pg_plugin_state_t state, uint32_t* usable, pg_error* err) {
  (void)state;
  (void)err;
  *usable = 1;
  return PG_OK;
}

static pg_status comm_init(pg_plugin_state_t state, const pg_ccl_bootstrap* b, pg_ccl_comm_t* out,
                           pg_error* err) {
  (void)state;
  if (b->world_size != 1 || b->rank != 0)
    return fail_with(err, PG_ERR_INVALID_ARGUMENT, "loopback: a world of one rank only");
  loop_comm* c = (loop_comm*)calloc(1, sizeof(loop_comm));
  if (c == NULL) return fail_with(err, PG_ERR_OUT_OF_MEMORY, "loopback: out of memory");
  if (b->address != NULL && strcmp(b->address, "fail:peer") == 0) c->fail = PG_ERR_PEER;
  if (b->address != NULL && strcmp(b->address, "fail:timeout") == 0) c->fail = PG_ERR_TIMEOUT;
  c->timeout = b->timeout_seconds > 0 ? b->timeout_seconds : 5;
  *out = (pg_ccl_comm_t)c;
  return PG_OK;
}

static void comm_destroy(pg_ccl_comm_t comm) {
  free(comm);
}

static pg_status comm_info(pg_ccl_comm_t comm, pg_ccl_comm_info* info, pg_error* err) {
  if (comm == NULL || info == NULL)
    return fail_with(err, PG_ERR_INVALID_ARGUMENT, "loopback: comm_info: NULL");
  info->rank = 0;
  info->world_size = 1;
  info->timeout_seconds = ((loop_comm*)comm)->timeout;
  snprintf(info->transport, sizeof(info->transport), "loopback");
  return PG_OK;
}

/* Bytes of one element; 0 for what is not a pg_dtype (or is void). */
static uint32_t dtype_size(uint32_t dtype) {
  switch (dtype) {
    case PG_DTYPE_FLOAT64:
    case PG_DTYPE_INT64:
    case PG_DTYPE_UINT64:
      return 8;
    case PG_DTYPE_FLOAT32:
    case PG_DTYPE_INT32:
    case PG_DTYPE_UINT32:
      return 4;
    case PG_DTYPE_FLOAT16:
    case PG_DTYPE_BFLOAT16:
    case PG_DTYPE_INT16:
    case PG_DTYPE_UINT16:
      return 2;
    case PG_DTYPE_BOOL:
    case PG_DTYPE_INT8:
    case PG_DTYPE_UINT8:
      return 1;
    default:
      return 0;
  }
}

static int is_float(uint32_t dtype) {
  return dtype == PG_DTYPE_FLOAT16 || dtype == PG_DTYPE_BFLOAT16 || dtype == PG_DTYPE_FLOAT32 ||
         dtype == PG_DTYPE_FLOAT64;
}

/* send -> recv through host memory, with each buffer's device plugin. */
static pg_status copy(loop_comm* c, const pg_ccl_buffer* send, const pg_ccl_buffer* recv,
                      uint64_t bytes, pg_error* err) {
  if (c->fail == PG_ERR_PEER)
    return fail_with(err, PG_ERR_PEER, "rank 0: peer rank 1 (pid 4242 on loopback) died");
  if (c->fail == PG_ERR_TIMEOUT)
    return fail_with(err, PG_ERR_TIMEOUT, "rank 0: timed out waiting for rank 1");
#ifdef PG_TEST_CCL_WRITES_PAST
  bytes += 4; /* the conformance kit's test: a plugin that writes past the count */
#endif
  void* host = malloc(bytes ? bytes : 1);
  if (host == NULL) return fail_with(err, PG_ERR_OUT_OF_MEMORY, "loopback: out of memory");
  pg_status s = PG_OK;
  if (send->buffer != NULL)
    s = send->device_plugin->allocator->copy_out(send->device, host, send->buffer, send->offset,
                                                 bytes, err);
  else
    memcpy(host, (const char*)send->host + send->offset, bytes);
  if (s == PG_OK && recv->buffer != NULL)
    s = recv->device_plugin->allocator->copy_in(recv->device, recv->buffer, recv->offset, host,
                                                bytes, err);
  else if (s == PG_OK)
    memcpy((char*)recv->host + recv->offset, host, bytes);
  free(host);
  return s;
}

static pg_status all_reduce(pg_ccl_comm_t comm, const pg_ccl_buffer* send,
                            const pg_ccl_buffer* recv, uint64_t count, uint32_t dtype, uint32_t op,
                            pg_stream_t stream, pg_error* err) {
  (void)stream;
  if (op > PG_CCL_MEAN) return fail_with(err, PG_ERR_INVALID_ARGUMENT, "loopback: bad op");
  if (dtype_size(dtype) == 0) return fail_with(err, PG_ERR_INVALID_ARGUMENT, "loopback: bad dtype");
  if (op == PG_CCL_MEAN && !is_float(dtype))
    return fail_with(err, PG_ERR_UNSUPPORTED, "loopback: mean needs a floating-point dtype");
  return copy((loop_comm*)comm, send, recv, count * dtype_size(dtype), err);
}

static pg_status broadcast(pg_ccl_comm_t comm, const pg_ccl_buffer* send, const pg_ccl_buffer* recv,
                           uint64_t count, uint32_t dtype, int32_t root, pg_stream_t stream,
                           pg_error* err) {
  (void)stream;
  if (root != 0) return fail_with(err, PG_ERR_INVALID_ARGUMENT, "loopback: root outside the world");
  if (dtype_size(dtype) == 0) return fail_with(err, PG_ERR_INVALID_ARGUMENT, "loopback: bad dtype");
  return copy((loop_comm*)comm, send, recv, count * dtype_size(dtype), err);
}

static pg_status all_gather(pg_ccl_comm_t comm, const pg_ccl_buffer* send,
                            const pg_ccl_buffer* recv, uint64_t count, uint32_t dtype,
                            pg_stream_t stream, pg_error* err) {
  (void)stream;
  if (dtype_size(dtype) == 0) return fail_with(err, PG_ERR_INVALID_ARGUMENT, "loopback: bad dtype");
  return copy((loop_comm*)comm, send, recv, count * dtype_size(dtype), err);
}

static pg_status reduce_scatter(pg_ccl_comm_t comm, const pg_ccl_buffer* send,
                                const pg_ccl_buffer* recv, uint64_t count, uint32_t dtype,
                                uint32_t op, pg_stream_t stream, pg_error* err) {
  return all_reduce(comm, send, recv, count, dtype, op, stream, err);
}

static pg_status barrier(pg_ccl_comm_t comm, pg_error* err) {
  loop_comm* c = (loop_comm*)comm;
  if (c->fail) return fail_with(err, (pg_status)c->fail, "rank 0: barrier: rank 1 is gone");
  return PG_OK;
}

static const pg_ccl_plugin table = {
    PG_TEST_CCL_MAJOR,
    PG_CCL_ABI_MINOR,
    sizeof(pg_ccl_plugin),
    0,
    PG_TEST_CCL_NAME,
    "0.0.1",
    NULL,
    0,
    0,
    init,
    NULL,
    probe,
    comm_init,
    comm_destroy,
    comm_info,
    all_reduce,
    broadcast,
    all_gather,
    reduce_scatter,
    barrier,
};

PG_PLUGIN_EXPORT const pg_ccl_plugin* pg_ccl_entry(void) {
  return &table;
}
