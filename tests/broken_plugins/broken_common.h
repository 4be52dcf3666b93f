/* A minimal, valid plugin table written against plugin.h directly. Each broken plugin starts
 * from it and breaks exactly one thing, so the host's refusal reason can be pinned by a test.
 * Buffers live in host memory; rendering and loading always fail with a clear status. */
#ifndef POLYGRAD_TESTS_BROKEN_COMMON_H
#define POLYGRAD_TESTS_BROKEN_COMMON_H

#include <polygrad/plugin.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int broken_state_token;
static int broken_device_token;

static void broken_set(pg_error* err, const char* message) {
  if (err != NULL) snprintf(err->message, sizeof(err->message), "%s", message);
}

static pg_status broken_init(const pg_host_services* host, pg_plugin_state_t* state,
                             pg_error* err) {
  (void)host;
  (void)err;
  *state = (pg_plugin_state_t)&broken_state_token;
  return PG_OK;
}

static pg_status broken_device_count(pg_plugin_state_t state, uint32_t* count, pg_error* err) {
  (void)state;
  (void)err;
  *count = 1;
  return PG_OK;
}

static pg_status broken_device_open(pg_plugin_state_t state, uint32_t index, pg_device_t* out,
                                    pg_error* err) {
  (void)state;
  if (index != 0) {
    broken_set(err, "only device 0 exists");
    return PG_ERR_INVALID_ARGUMENT;
  }
  *out = (pg_device_t)&broken_device_token;
  return PG_OK;
}

static pg_status broken_properties(pg_device_t device, pg_device_properties* props, pg_error* err) {
  (void)device;
  (void)err;
  snprintf(props->name, sizeof(props->name), "broken test device");
  snprintf(props->target, sizeof(props->target), "none");
  props->caps.dtype_mask = 1u << PG_DTYPE_FLOAT32;
  props->caps.compute_units = 1;
  return PG_OK;
}

typedef struct broken_buffer {
  uint64_t size;
  unsigned char* data;
} broken_buffer;

static pg_status broken_alloc(pg_device_t device, uint64_t nbytes, pg_buffer_t* out,
                              pg_error* err) {
  (void)device;
  broken_buffer* b = (broken_buffer*)calloc(1, sizeof(broken_buffer));
  if (b != NULL) b->data = (unsigned char*)calloc(nbytes ? nbytes : 1, 1);
  if (b == NULL || b->data == NULL) {
    free(b);
    broken_set(err, "out of host memory");
    return PG_ERR_OUT_OF_MEMORY;
  }
  b->size = nbytes;
  *out = (pg_buffer_t)b;
  return PG_OK;
}

static void broken_free(pg_device_t device, pg_buffer_t buffer) {
  (void)device;
  if (buffer == NULL) return;
  free(((broken_buffer*)buffer)->data);
  free(buffer);
}

static pg_status broken_copy_in(pg_device_t device, pg_buffer_t dst, uint64_t offset,
                                const void* src, uint64_t nbytes, pg_error* err) {
  (void)device;
  (void)err;
  memcpy(((broken_buffer*)dst)->data + offset, src, nbytes);
  return PG_OK;
}

static pg_status broken_copy_out(pg_device_t device, void* dst, pg_buffer_t src, uint64_t offset,
                                 uint64_t nbytes, pg_error* err) {
  (void)device;
  (void)err;
  memcpy(dst, ((broken_buffer*)src)->data + offset, nbytes);
  return PG_OK;
}

static pg_status broken_render(pg_device_t device, const pg_kernel_program* program,
                               pg_byte_sink* out, pg_error* err) {
  (void)device;
  (void)program;
  (void)out;
  broken_set(err, "this test plugin renders nothing");
  return PG_ERR_UNSUPPORTED;
}

static pg_status broken_load(pg_device_t device, const void* artifact, uint64_t size,
                             const char* entry, pg_program_t* out, pg_error* err) {
  (void)device;
  (void)artifact;
  (void)size;
  (void)entry;
  (void)out;
  broken_set(err, "this test plugin loads nothing");
  return PG_ERR_COMPILE;
}

static void broken_unload(pg_device_t device, pg_program_t program) {
  (void)device;
  (void)program;
}

static pg_status broken_launch(pg_device_t device, pg_program_t program, const pg_launch_args* args,
                               pg_error* err) {
  (void)device;
  (void)program;
  (void)args;
  broken_set(err, "this test plugin launches nothing");
  return PG_ERR_LAUNCH;
}

static pg_status broken_synchronize(pg_device_t device, pg_error* err) {
  (void)device;
  (void)err;
  return PG_OK;
}

static const pg_allocator_api broken_allocator = {
    sizeof(pg_allocator_api), 16,   broken_alloc, broken_free, broken_copy_in,
    broken_copy_out,          NULL, NULL,         NULL,        NULL};
static const pg_renderer_api broken_renderer = {sizeof(pg_renderer_api), PG_ARTIFACT_OTHER,
                                                broken_render};
static const pg_loader_api broken_loader = {sizeof(pg_loader_api),
                                            0,
                                            broken_load,
                                            broken_unload,
                                            broken_launch,
                                            broken_synchronize,
                                            NULL,
                                            NULL,
                                            0,
                                            0};

/* A valid ABI 1.0 table named `name` serving devices `prefix`. */
static inline pg_plugin broken_table(const char* name, const char* prefix) {
  pg_plugin t;
  memset(&t, 0, sizeof(t));
  t.abi_major = PG_PLUGIN_ABI_MAJOR;
  t.abi_minor = PG_PLUGIN_ABI_MINOR;
  t.struct_size = sizeof(pg_plugin);
  t.isa_version = PG_KERNEL_ISA_VERSION;
  t.name = name;
  t.version = "0.0.1";
  t.device_prefix = prefix;
  t.init = broken_init;
  t.device_count = broken_device_count;
  t.device_open = broken_device_open;
  t.device_properties = broken_properties;
  t.allocator = &broken_allocator;
  t.renderer = &broken_renderer;
  t.loader = &broken_loader;
  return t;
}

#endif /* POLYGRAD_TESTS_BROKEN_COMMON_H */
