/*
 * polygrad plugin SDK, ABI version 1 (minor 3).
 *
 * The whole contract between the polygrad host and a device plugin. A plugin is a shared
 * library that exports exactly one symbol, PG_PLUGIN_ENTRY_NAME, returning a pg_plugin table.
 *
 * Rules (see docs/plugin-sdk.md):
 *  - C ABI only. No C++ exceptions or STL types cross this boundary.
 *  - Every table starts with its struct_size; tables are append-only. A reader uses
 *    PG_HAS_FIELD() before touching a field that was added after 1.0, and treats a field past
 *    struct_size as NULL / zero.
 *  - Optional entries may be NULL (each is marked "optional" below).
 *  - Every fallible call returns a pg_status and, when it is not PG_OK, writes a message into
 *    the caller-owned pg_error. Whoever allocates frees, through the API.
 *  - A plugin never calls into the host except through pg_host_services.
 */
#ifndef POLYGRAD_PLUGIN_H
#define POLYGRAD_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ----------------------------------------------------------------------------------------- */
/* Versions                                                                                  */
/* ----------------------------------------------------------------------------------------- */

/** ABI major: a plugin and host with different majors never load each other. */
#define PG_PLUGIN_ABI_MAJOR 1
/** ABI minor: grows when fields or ops are appended. A host loads plugins of its minor or older. */
#define PG_PLUGIN_ABI_MINOR 5
/** Version of the kernel-program instruction set (the op list below). A plugin declares the
 *  ISA it renders (pg_plugin.isa_version); the host emits only ops of min(host ISA, plugin ISA)
 *  and stamps that version on every program, so a plugin accepts programs at or below its own
 *  ISA. ISA 1: PARAM_BUFFER .. GEP. ISA 2 (ABI 1.3): WMMA, ATOMIC_ADD. */
#define PG_KERNEL_ISA_VERSION 2

/** The one symbol a plugin exports. */
#define PG_PLUGIN_ENTRY_NAME "pg_plugin_entry"

#define PG_PLUGIN_CONCAT_(a, b) a##b
#define PG_PLUGIN_CONCAT(a, b) PG_PLUGIN_CONCAT_(a, b)

/* Static registration (ABI 1.3): a plugin compiled with PG_PLUGIN_STATIC_NAME defined (a C
 * identifier, e.g. -DPG_PLUGIN_STATIC_NAME=cpu_clang) names its entry
 * pg_plugin_entry_<name> and does not export it, so several plugins link into one program
 * without their entries clashing. The host registers such an entry with
 * pg_register_static_plugin (C API) or polygrad::Registry::add_static (C++). */
#ifdef PG_PLUGIN_STATIC_NAME
#define PG_PLUGIN_ENTRY PG_PLUGIN_CONCAT(pg_plugin_entry_, PG_PLUGIN_STATIC_NAME)
#define PG_PLUGIN_EXPORT
#else
#define PG_PLUGIN_ENTRY pg_plugin_entry
#if defined(_WIN32)
#define PG_PLUGIN_EXPORT __declspec(dllexport)
#else
#define PG_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif
#endif

/** True when `table` (a pointer to a struct with struct_size first) is large enough to hold
 *  `field`. Use it for every field added after the struct's first ABI version. */
#define PG_HAS_FIELD(table, type, field) \
  ((table) != NULL && (table)->struct_size >= offsetof(type, field) + sizeof(((type*)0)->field))

/* ----------------------------------------------------------------------------------------- */
/* Status and errors                                                                         */
/* ----------------------------------------------------------------------------------------- */

/** Result of every fallible call. */
typedef enum pg_status {
  PG_OK = 0,
  PG_ERR_INVALID_ARGUMENT = 1, /**< a caller passed something malformed */
  PG_ERR_OUT_OF_MEMORY = 2,    /**< an allocation failed */
  PG_ERR_UNSUPPORTED = 3,      /**< op, dtype or feature not supported by this plugin */
  PG_ERR_VERSION = 4,          /**< ABI or ISA version mismatch */
  PG_ERR_COMPILE = 5,          /**< an artifact could not be built or loaded */
  PG_ERR_LAUNCH = 6,           /**< a program failed to launch or run */
  PG_ERR_DEVICE = 7,           /**< the device or its driver failed */
  PG_ERR_INTERNAL = 8,         /**< a bug: an unexpected exception or state */
  /* Returned by collective-communication plugins only (ccl.h, CCL ABI 1.0); a device plugin
     never returns them, so they leave the device ABI as it was. */
  PG_ERR_PEER = 9,    /**< a peer process died or left the group (the message names its rank) */
  PG_ERR_TIMEOUT = 10 /**< peers did not answer within the timeout (the message names them) */
} pg_status;

#define PG_ERROR_MESSAGE_MAX 1024

/** Caller-owned error buffer. The callee writes a NUL-terminated message on failure. */
typedef struct pg_error {
  char message[PG_ERROR_MESSAGE_MAX];
} pg_error;

/* ----------------------------------------------------------------------------------------- */
/* Data types                                                                                */
/* ----------------------------------------------------------------------------------------- */

/** X(NAME, c_name, size_in_bytes, kind) with kind: 'b' bool, 'i' signed, 'u' unsigned, 'f' float.
 *  Append only; the enum value is the position. */
/* clang-format off */
#define PG_DTYPES(X)                                                                          \
  X(VOID, "void", 0, 'v')                                                                     \
  X(BOOL, "bool", 1, 'b')                                                                     \
  X(INT8, "int8", 1, 'i')                                                                     \
  X(INT16, "int16", 2, 'i')                                                                   \
  X(INT32, "int32", 4, 'i')                                                                   \
  X(INT64, "int64", 8, 'i')                                                                   \
  X(UINT8, "uint8", 1, 'u')                                                                   \
  X(UINT16, "uint16", 2, 'u')                                                                 \
  X(UINT32, "uint32", 4, 'u')                                                                 \
  X(UINT64, "uint64", 8, 'u')                                                                 \
  X(FLOAT16, "float16", 2, 'f')                                                               \
  X(BFLOAT16, "bfloat16", 2, 'f')                                                             \
  X(FLOAT32, "float32", 4, 'f')                                                               \
  X(FLOAT64, "float64", 8, 'f')
/* clang-format on */

/* In C++ the enums a caller hands in take int as their fixed underlying type: every int a C
   caller passes is then a value of the type, which the host checks and refuses with an error,
   where an enum without one would make loading it undefined behaviour. The size (that of int)
   is the same in C and C++. */
#ifdef __cplusplus
#define PG_ENUM_INT : int
#else
#define PG_ENUM_INT
#endif

/** Scalar element type. */
/* clang-format off */
typedef enum pg_dtype PG_ENUM_INT {
#define PG_X(name, str, size, kind) PG_DTYPE_##name,
  PG_DTYPES(PG_X)
#undef PG_X
  PG_DTYPE_COUNT
} pg_dtype;
/* clang-format on */

/** Address space of a pointer-typed value. PG_ADDR_NONE means "a value, not a pointer". */
typedef enum pg_addrspace {
  PG_ADDR_NONE = 0,   /**< not a pointer */
  PG_ADDR_GLOBAL = 1, /**< device memory, a kernel parameter (CUDA global, WASM linear memory) */
  PG_ADDR_LOCAL = 2,  /**< workgroup-shared memory (CUDA __shared__) */
  PG_ADDR_REG = 3     /**< per-thread private array (accumulators) */
} pg_addrspace;

/* ----------------------------------------------------------------------------------------- */
/* Kernel program: the lowered instruction set a plugin renders                             */
/* ----------------------------------------------------------------------------------------- */

/*
 * A kernel program is a flat list of instructions in SSA form. Instruction i may only use
 * results of instructions j < i as sources. Sources are listed in the program's operand array:
 * instruction i uses operands[src_start .. src_start + src_count).
 *
 * Types: every instruction has a result dtype, a lane count `vcount` (1 = scalar, otherwise a
 * vector of that many lanes) and an address space (PG_ADDR_NONE for values; pointers carry the
 * space they point into, with dtype the pointee's element type). `vcount` is always the lane
 * count of the instruction's result; STORE, which has none, has the lane count it writes,
 * which is its value's vcount (sdk::check_program refuses any other). A gate (of a LOAD or
 * STORE) is one bool, vcount 1, for every lane of the access.
 *
 * X(NAME, sources, description). `sources` is the exact count, or -1 when it varies (see text).
 * Append only; bump PG_KERNEL_ISA_VERSION and PG_PLUGIN_ABI_MINOR when adding.
 */
/* clang-format off */
#define PG_KERNEL_OPS(X)                                                                      \
  /* --- definitions ------------------------------------------------------------------- */   \
  X(PARAM_BUFFER, 0, "buffer parameter: arg.i = buffer slot; result is a GLOBAL pointer")     \
  X(PARAM_SCALAR, 0, "scalar parameter: arg.i = scalar slot; result is a value of dtype")     \
  X(DEFINE_LOCAL, 0, "workgroup-shared array: arg.i = element count; LOCAL pointer")          \
  X(DEFINE_REG, 0, "per-thread array: arg.i = element count; REG pointer")                    \
  X(SPECIAL, 0,                                                                               \
    "launch index: arg.i = dim (0..2), arg2 = PG_SPECIAL_GROUP | PG_SPECIAL_LOCAL | "         \
    "PG_SPECIAL_GLOBAL; an int32 value")                                                      \
  X(CONST, 0, "constant: arg.i (bool, ints) or arg.f (floats) by dtype; vcount lanes splat")  \
  /* --- control flow ------------------------------------------------------------------ */   \
  X(RANGE, 1, "loop start: counts 0 .. src0-1 (int); arg.i = loop id; result = loop var")     \
  X(END_RANGE, 1, "loop end: src0 = the RANGE it closes")                                     \
  X(IF, 1, "conditional block start: src0 = bool condition")                                 \
  X(END_IF, 1, "conditional block end: src0 = the IF it closes")                             \
  X(BARRIER, 0, "workgroup barrier (CUDA __syncthreads); a no-op where there are no groups")   \
  /* --- memory ------------------------------------------------------------------------ */   \
  X(INDEX, 2, "pointer arithmetic: src0 = pointer, src1 = element offset (int); a pointer")  \
  X(LOAD, -1,                                                                                 \
    "load: (ptr) or (ptr, alt, gate): vcount consecutive elements from ptr; when gate (one "  \
    "bool) is false the result is alt (the LOAD's dtype and vcount), memory not touched")     \
  X(STORE, -1,                                                                                \
    "store: (ptr, value) or (ptr, value, gate): writes value's vcount consecutive elements "  \
    "(the STORE's vcount equals the value's); gate is one bool; arg.i = pg_store_hints")      \
  /* --- unary ------------------------------------------------------------------------- */   \
  X(NEG, 1, "-x")                                                                             \
  X(NOT, 1, "logical not (bool) or bitwise not (ints)")                                       \
  X(RECIP, 1, "1/x (floats)")                                                                 \
  X(SQRT, 1, "square root (floats)")                                                          \
  X(EXP2, 1, "2^x (floats); decomposed by the host when PG_CAP_DECOMPOSE_TRANSCENDENTAL")     \
  X(LOG2, 1, "log2(x) (floats); likewise")                                                    \
  X(SIN, 1, "sin(x) (floats); likewise")                                                      \
  X(TRUNC, 1, "round toward zero (floats)")                                                   \
  /* --- binary ------------------------------------------------------------------------ */   \
  X(ADD, 2, "a + b")                                                                          \
  X(SUB, 2, "a - b")                                                                          \
  X(MUL, 2, "a * b")                                                                          \
  X(FDIV, 2, "a / b (floats)")                                                                \
  X(IDIV, 2, "a / b (ints, rounds toward zero; b != 0)")                                      \
  X(MOD, 2, "a % b (ints, sign of a; b != 0)")                                                \
  X(MAX, 2, "max(a, b); for floats NaN if either is NaN")                                     \
  X(CMPLT, 2, "a < b (result bool)")                                                          \
  X(CMPNE, 2, "a != b (result bool)")                                                         \
  X(CMPEQ, 2, "a == b (result bool)")                                                         \
  X(AND, 2, "a & b (bool, ints)")                                                             \
  X(OR, 2, "a | b (bool, ints)")                                                              \
  X(XOR, 2, "a ^ b (bool, ints)")                                                             \
  X(SHL, 2, "a << b (ints; 0 <= b < bits)")                                                   \
  X(SHR, 2, "a >> b (ints, arithmetic for signed; 0 <= b < bits)")                            \
  /* --- ternary ----------------------------------------------------------------------- */   \
  X(WHERE, 3, "src0 ? src1 : src2 (src0 bool)")                                               \
  X(MULACC, 3, "src0 * src1 + src2")                                                          \
  /* --- conversions and vectors ------------------------------------------------------- */   \
  X(CAST, 1, "value conversion to dtype (C semantics; float->int truncates)")                 \
  X(BITCAST, 1, "reinterpret the bits as dtype (same total size)")                            \
  X(VECTORIZE, -1, "build a vector of vcount lanes from vcount scalar sources")               \
  X(GEP, 1, "extract lane arg.i of vector src0")                                             \
  /* --- ISA 2 (ABI 1.3) ---------------------------------------------------------------- */   \
  X(WMMA, 3,                                                                                  \
    "tensor-core multiply-accumulate D = A * B + C on register fragments: src0 = A, src1 = "  \
    "B, src2 = C; arg.i = index into caps.tensor_cores; dtype and vcount those of C's "       \
    "per-thread fragment")                                                                    \
  X(ATOMIC_ADD, 2,                                                                            \
    "atomic *src0 += src1 (src0 a GLOBAL or LOCAL pointer from INDEX, src1 a scalar of its "  \
    "dtype); dtype = that dtype, vcount 1, no value (no instruction uses it); only on "        \
    "devices with PG_CAP_ATOMIC_ADD")
/* clang-format on */

/** Kernel-program op. */
/* clang-format off */
typedef enum pg_op {
#define PG_X(name, nsrc, doc) PG_OP_##name,
  PG_KERNEL_OPS(PG_X)
#undef PG_X
  PG_OP_COUNT
} pg_op;
/* clang-format on */

/** The first op of ISA 2; every op before it is ISA 1. */
#define PG_OP_FIRST_ISA2 PG_OP_WMMA

/** Kinds of SPECIAL launch index (instruction arg2). */
typedef enum pg_special_kind {
  PG_SPECIAL_GROUP = 0, /**< block / workgroup index (CUDA blockIdx) */
  PG_SPECIAL_LOCAL = 1, /**< thread index inside the group (CUDA threadIdx) */
  PG_SPECIAL_GLOBAL = 2 /**< group * local_size + local: the flat index along a dim */
} pg_special_kind;

/** Hints on a STORE (its arg.i). A renderer may ignore any of them; the result is the same. */
typedef enum pg_store_hints {
  /** The kernel writes a large output (more than a cache holds) through this store and does
   *  not read it: a non-temporal (cache-bypassing) store saves reading each line before
   *  writing it (x86 movnt). Only on ungated vector stores; the host emits it only there. */
  PG_STORE_STREAM = 1
} pg_store_hints;

/** Immediate argument of an instruction; which member is meaningful depends on op and dtype. */
typedef union pg_arg {
  int64_t i;
  double f;
} pg_arg;

/** One instruction. 32 bytes. */
typedef struct pg_instruction {
  uint16_t op;        /**< pg_op */
  uint8_t dtype;      /**< pg_dtype of the result, or of the pointee for pointers */
  uint8_t vcount;     /**< lanes: 1 = scalar */
  uint8_t addrspace;  /**< pg_addrspace: PG_ADDR_NONE for values */
  uint8_t reserved0;  /**< zero */
  uint16_t reserved1; /**< zero */
  uint32_t src_start; /**< first source in pg_kernel_program.operands */
  uint32_t src_count; /**< number of sources */
  pg_arg arg;         /**< immediate argument */
  int64_t arg2;       /**< second immediate (SPECIAL kind); zero otherwise */
} pg_instruction;

/** A complete kernel. Owned by the host; valid only during the call it is passed to. */
typedef struct pg_kernel_program {
  uint32_t struct_size;               /**< sizeof(pg_kernel_program) of the writer */
  uint32_t isa_version;               /**< PG_KERNEL_ISA_VERSION of the writer */
  const char* name;                   /**< entry name: a C identifier, unique per program */
  const pg_instruction* instructions; /**< instruction_count instructions */
  uint32_t instruction_count;
  uint32_t operand_count;
  const uint32_t* operands; /**< operand_count instruction indices */
  uint32_t buffer_count;    /**< PARAM_BUFFER slots are 0 .. buffer_count-1 */
  uint32_t scalar_count;    /**< PARAM_SCALAR slots are 0 .. scalar_count-1 */
  uint32_t local_size[3];   /**< launch local size the program was built for */
  uint32_t reserved;        /**< zero */
} pg_kernel_program;

/* ----------------------------------------------------------------------------------------- */
/* Host services: what the host gives a plugin                                               */
/* ----------------------------------------------------------------------------------------- */

typedef enum pg_log_level {
  PG_LOG_DEBUG = 0,
  PG_LOG_INFO = 1,
  PG_LOG_WARNING = 2,
  PG_LOG_ERROR = 3
} pg_log_level;

/** Table the host passes to pg_plugin.init. Valid until the process ends. */
typedef struct pg_host_services {
  uint32_t struct_size; /**< sizeof(pg_host_services) of the host */
  uint32_t abi_major;   /**< the host's PG_PLUGIN_ABI_MAJOR */
  uint32_t abi_minor;   /**< the host's PG_PLUGIN_ABI_MINOR */
  uint32_t reserved;
  void* host_context; /**< passed back to every service below */
  /** Optional. Log a message on behalf of the plugin. */
  void (*log)(void* host_context, pg_log_level level, const char* message);
  /** Optional. The configured value of option `key` for device `device_index`, or for the
   *  plugin as a whole when device_index is -1, as text; NULL when not set (use the default).
   *  Values were validated against the plugin's option schema. The string lives until the
   *  process ends. */
  const char* (*get_option)(void* host_context, int32_t device_index, const char* key);
  /** Absolute path of the plugin's own shared library. */
  const char* plugin_path;
} pg_host_services;

/* ----------------------------------------------------------------------------------------- */
/* Options a plugin declares (validated by the host against the YAML config)                 */
/* ----------------------------------------------------------------------------------------- */

typedef enum pg_option_type {
  PG_OPTION_BOOL = 0,
  PG_OPTION_INT = 1,
  PG_OPTION_FLOAT = 2,
  PG_OPTION_STRING = 3
} pg_option_type;

/** One option of the plugin's schema. */
typedef struct pg_option_desc {
  const char* key; /**< YAML key under devices.<name> */
  pg_option_type type;
  const char* default_value; /**< as text; NULL for "no default" */
  const char* help;          /**< one line */
  double min_value;          /**< for INT and FLOAT: inclusive bounds; min > max = unbounded */
  double max_value;
} pg_option_desc;

/* ----------------------------------------------------------------------------------------- */
/* Devices and capabilities                                                                  */
/* ----------------------------------------------------------------------------------------- */

/** Capability flags. */
typedef enum pg_capability_flags {
  PG_CAP_DECOMPOSE_TRANSCENDENTAL = 1u << 0, /**< host must lower EXP2/LOG2/SIN itself */
  PG_CAP_LOCAL_MEMORY = 1u << 1,             /**< DEFINE_LOCAL and BARRIER are meaningful */
  PG_CAP_GROUPS = 1u << 2,                   /**< GROUP/LOCAL specials map to hardware */
  PG_CAP_HOST_MEMORY = 1u << 3,              /**< buffers live in host memory */
  /* ABI 1.3 */
  PG_CAP_ALIGNED_VECTORS = 1u << 4, /**< a vector LOAD/STORE needs an address aligned to the
                                         vector's bytes; the host emits one only where it is */
  PG_CAP_ATOMIC_ADD = 1u << 5,      /**< ATOMIC_ADD is supported (see op_support for dtypes) */
  PG_CAP_ASYNC = 1u << 6,           /**< pg_plugin.async runs work on streams */
  /** Only the program's vectors run as SIMD: nothing after the renderer vectorises scalar
   *  loops (WebAssembly). The host then vectorises every kernel it can, including those with
   *  ops the renderer writes lane by lane. */
  PG_CAP_EXPLICIT_SIMD = 1u << 7
} pg_capability_flags;

/** Most tensor-core shapes a device can list. */
#define PG_MAX_TENSOR_CORES 8

/** One tensor-core shape (ABI 1.3): D (m x n) = A (m x k) * B (k x n) + C (m x n), computed
 *  together by `threads` threads (a warp; 1 = one thread holds whole fragments). Thread t
 *  holds lanes_X = rows_X * cols_X / threads elements of fragment X as one vector value.
 *  The element maps give, for X in A, B, C (D as C), entry [t * lanes_X + l] = row * cols_X +
 *  col of the element thread t holds in lane l; a NULL map is the canonical order (entry =
 *  t * lanes_X + l). Maps are static data of the plugin, valid until the process ends. */
typedef struct pg_tensor_core {
  uint16_t m, n, k;
  uint16_t threads;
  uint8_t dtype_a; /**< pg_dtype of A's elements */
  uint8_t dtype_b; /**< pg_dtype of B's elements */
  uint8_t dtype_c; /**< pg_dtype of the accumulator C and the result D */
  uint8_t reserved0;
  uint32_t reserved1;
  const uint16_t* a_map;
  const uint16_t* b_map;
  const uint16_t* c_map;
} pg_tensor_core;

/** What codegen may assume about a device. */
typedef struct pg_capabilities {
  uint32_t struct_size;           /**< sizeof(pg_capabilities) of the caller */
  uint32_t flags;                 /**< pg_capability_flags */
  uint64_t dtype_mask;            /**< bit (1 << pg_dtype) set for each supported dtype */
  uint32_t vector_width_bytes;    /**< preferred SIMD width in bytes (e.g. 32 for AVX2) */
  uint32_t max_vector_lanes;      /**< largest vcount the renderer accepts */
  uint32_t max_threads_per_group; /**< product of local dims limit (1 without groups) */
  uint32_t max_local_dims[3];     /**< per-dim local size limit */
  uint32_t max_global_dims[3];    /**< per-dim global size limit */
  uint32_t compute_units;         /**< threads (CPU) or SMs (GPU) */
  uint64_t local_memory_bytes;    /**< shared memory per group; 0 without */
  /* ABI 1.2 (read through PG_HAS_FIELD; 0 from an older plugin) */
  uint64_t l1_cache_bytes; /**< level-1 data cache of one compute unit; 0 if unknown */
  uint64_t l2_cache_bytes; /**< level-2 cache one compute unit can count on; 0 if unknown */
  /* ABI 1.3 (read through PG_HAS_FIELD; 0 from an older plugin) */
  uint32_t subgroup_size;        /**< threads that run in lockstep (a warp); 0 or 1 without */
  uint32_t index_bits;           /**< 32: index arithmetic in int32 where sizes fit; 0 or 64:
                                      int64 */
  uint64_t max_allocation_bytes; /**< largest single buffer; 0 if unknown */
  uint32_t tensor_core_count;    /**< entries of tensor_cores in use */
  uint32_t reserved13;
  pg_tensor_core tensor_cores[PG_MAX_TENSOR_CORES];
} pg_capabilities;

/** Properties of one device. */
typedef struct pg_device_properties {
  uint32_t struct_size; /**< sizeof(pg_device_properties) of the caller */
  uint32_t reserved;
  char name[128];        /**< human-readable, e.g. the CPU model */
  char target[64];       /**< compiler target, e.g. "x86_64-znver3" or "sm_90" */
  uint64_t memory_bytes; /**< total device memory, 0 if unknown */
  pg_capabilities caps;
} pg_device_properties;

/* Opaque handles owned by the plugin. */
typedef struct pg_plugin_state_s* pg_plugin_state_t; /**< per-plugin state from init */
typedef struct pg_device_s* pg_device_t;             /**< an opened device */
typedef struct pg_buffer_s* pg_buffer_t;             /**< device memory */
typedef struct pg_program_s* pg_program_t;           /**< a loaded program */
typedef struct pg_stream_s* pg_stream_t;             /**< an in-order work queue (ABI 1.3) */
typedef struct pg_event_s* pg_event_t;               /**< a point in a stream (ABI 1.3) */

/* ----------------------------------------------------------------------------------------- */
/* Role tables                                                                               */
/* ----------------------------------------------------------------------------------------- */

/** Allocator role: owns device memory. Offsets and sizes are in bytes. */
typedef struct pg_allocator_api {
  uint32_t struct_size;
  uint32_t alignment; /**< guaranteed alignment of every allocation in bytes */
  /** Allocate nbytes (0 allowed: a valid, unique handle). */
  pg_status (*alloc)(pg_device_t device, uint64_t nbytes, pg_buffer_t* out, pg_error* err);
  /** Free a buffer from alloc. NULL is ignored. */
  void (*free)(pg_device_t device, pg_buffer_t buffer);
  /** Copy host memory into the buffer at dst_offset. Completes before returning. */
  pg_status (*copy_in)(pg_device_t device, pg_buffer_t dst, uint64_t dst_offset, const void* src,
                       uint64_t nbytes, pg_error* err);
  /** Copy from the buffer at src_offset into host memory. Completes before returning. */
  pg_status (*copy_out)(pg_device_t device, void* dst, pg_buffer_t src, uint64_t src_offset,
                        uint64_t nbytes, pg_error* err);
  /** Optional. Copy between two buffers of this device. */
  pg_status (*copy_device)(pg_device_t device, pg_buffer_t dst, uint64_t dst_offset,
                           pg_buffer_t src, uint64_t src_offset, uint64_t nbytes, pg_error* err);
  /** Optional. Host-visible address of the buffer (host-memory devices), or NULL. */
  void* (*host_pointer)(pg_device_t device, pg_buffer_t buffer);
  /** Optional (ABI 1.1; host-memory devices). A buffer over `nbytes` of memory the host owns
   *  at `host`, without a copy: kernels read and write that memory. `free` releases only the
   *  handle; the host keeps the memory valid until then. PG_ERR_UNSUPPORTED when the memory
   *  cannot be used (e.g. too little alignment); the host then copies. */
  pg_status (*wrap_host)(pg_device_t device, void* host, uint64_t nbytes, pg_buffer_t* out,
                         pg_error* err);
  /** Optional (ABI 1.4; devices with memory of their own). The address of the buffer's first
   *  byte in the device's own address space (a CUdeviceptr on CUDA), for the vendor's
   *  libraries that work on device memory directly: a ccl plugin over NCCL hands it to NCCL.
   *  Valid until the buffer is freed. Read it through PG_HAS_FIELD. */
  pg_status (*device_address)(pg_device_t device, pg_buffer_t buffer, uint64_t* out, pg_error* err);
} pg_allocator_api;

/** Artifact formats a renderer can declare. */
typedef enum pg_artifact_format {
  PG_ARTIFACT_C_SOURCE = 1,    /**< C source text */
  PG_ARTIFACT_CUDA_SOURCE = 2, /**< CUDA C++ source text */
  PG_ARTIFACT_PTX = 3,         /**< PTX assembly text */
  PG_ARTIFACT_WASM = 4,        /**< a WebAssembly module */
  PG_ARTIFACT_OBJECT = 5,      /**< native object code */
  PG_ARTIFACT_OTHER = 100      /**< plugin-defined bytes */
} pg_artifact_format;

/** Host-owned growable byte buffer a renderer writes its artifact into. */
typedef struct pg_byte_sink {
  void* context;
  /** Append n bytes. Returns 0 on success, non-zero if the host is out of memory. */
  int (*append)(void* context, const void* data, uint64_t n);
} pg_byte_sink;

/** Renderer role: kernel program -> artifact. */
typedef struct pg_renderer_api {
  uint32_t struct_size;
  uint32_t format; /**< pg_artifact_format */
  /** Render `program` into `out`. PG_ERR_UNSUPPORTED names the op and dtype it cannot do. */
  pg_status (*render)(pg_device_t device, const pg_kernel_program* program, pg_byte_sink* out,
                      pg_error* err);
} pg_renderer_api;

/** Launch description. All arrays are owned by the caller and read during the call. */
typedef struct pg_launch_args {
  uint32_t struct_size;
  uint32_t buffer_count;
  const pg_buffer_t* buffers; /**< one per PARAM_BUFFER slot */
  uint32_t scalar_count;
  uint32_t shared_memory_bytes; /**< dynamic shared memory per group */
  const int64_t* scalars;       /**< one per PARAM_SCALAR slot, as int64 (floats: bit pattern
                                     of a double) */
  uint32_t global_size[3];      /**< number of groups per dim */
  uint32_t local_size[3];       /**< threads per group per dim */
} pg_launch_args;

/** Kinds of kernel parameter (pg_param_info.kind). */
typedef enum pg_param_kind {
  PG_PARAM_BUFFER = 0, /**< a PARAM_BUFFER slot: a pg_buffer_t at launch */
  PG_PARAM_SCALAR = 1  /**< a PARAM_SCALAR slot: an int64 at launch (see pg_launch_args) */
} pg_param_kind;

/** How a kernel uses a buffer parameter (pg_param_info.access bits). */
typedef enum pg_param_access {
  PG_ACCESS_READ = 1u << 0,  /**< the kernel loads from it */
  PG_ACCESS_WRITE = 1u << 1, /**< the kernel stores to it */
  PG_ACCESS_ATOMIC = 1u << 2 /**< the kernel updates it with ATOMIC_ADD */
} pg_param_access;

/** One kernel parameter (ABI 1.3). */
typedef struct pg_param_info {
  uint32_t kind;   /**< pg_param_kind */
  uint32_t slot;   /**< the PARAM_BUFFER or PARAM_SCALAR slot */
  uint32_t dtype;  /**< pg_dtype: a buffer's element type, or the scalar's type */
  uint32_t access; /**< pg_param_access bits for buffers; 0 for scalars */
} pg_param_info;

/** What the host knows of a program, handed to load_program and compile (ABI 1.3). Owned by
 *  the host; valid only during the call. */
typedef struct pg_program_info {
  uint32_t struct_size;            /**< sizeof(pg_program_info) of the writer */
  uint32_t isa_version;            /**< the ISA the program was written in */
  const char* entry;               /**< the program's name (its entry point) */
  uint32_t artifact_format;        /**< pg_artifact_format of the bytes handed in */
  uint32_t param_count;            /**< entries of params */
  const pg_param_info* params;     /**< every buffer slot in order, then every scalar slot */
  uint64_t static_local_bytes;     /**< bytes of all DEFINE_LOCAL arrays of one group */
  uint64_t dynamic_local_bytes;    /**< the most shared_memory_bytes a launch will pass */
  uint32_t required_local_size[3]; /**< the local size every launch uses; 0 = any */
  uint32_t reserved;
} pg_program_info;

/** Loader flags (ABI 1.5, pg_loader_api.flags). */
typedef enum pg_loader_flags {
  /** load and load_program may run on several threads at once, for one device or several;
   *  each call builds its own program from its own artifact. The host then builds the new
   *  programs of one schedule side by side (a compiler per thread) and launches each once it
   *  is built. Every other call keeps its rules. */
  PG_LOADER_CONCURRENT_LOAD = 1u << 0
} pg_loader_flags;

/** Program loader role: artifact -> program; launch; synchronise. */
typedef struct pg_loader_api {
  uint32_t struct_size;
  uint32_t reserved;
  /** Build and load an artifact; `entry` is the program's name. Bad bytes -> PG_ERR_COMPILE. */
  pg_status (*load)(pg_device_t device, const void* artifact, uint64_t size, const char* entry,
                    pg_program_t* out, pg_error* err);
  /** Release a program. NULL is ignored. */
  void (*unload)(pg_device_t device, pg_program_t program);
  /** Enqueue one launch. May return before the work finishes; see synchronize. */
  pg_status (*launch)(pg_device_t device, pg_program_t program, const pg_launch_args* args,
                      pg_error* err);
  /** Wait until every launch on the device has finished. */
  pg_status (*synchronize)(pg_device_t device, pg_error* err);
  /** Optional. Launch, wait, and report the device time in seconds (kernel search). */
  pg_status (*launch_timed)(pg_device_t device, pg_program_t program, const pg_launch_args* args,
                            double* seconds, pg_error* err);
  /** Optional (ABI 1.3). Like load, with the program's metadata: parameter kinds and dtypes,
   *  local memory, the required local size, and the artifact's format (the renderer's, or the
   *  compiler's binary_format for bytes from pg_compiler_api.compile). The host calls it in
   *  place of load when present. */
  pg_status (*load_program)(pg_device_t device, const void* artifact, uint64_t size,
                            const pg_program_info* info, pg_program_t* out, pg_error* err);
  /* ABI 1.5 (read through PG_HAS_FIELD; 0 from an older plugin) */
  uint32_t flags; /**< pg_loader_flags */
  uint32_t reserved15;
} pg_loader_api;

/** A compilation target (ABI 1.3): what a device is, without a device. */
typedef struct pg_target {
  uint32_t struct_size; /**< sizeof(pg_target) of the caller */
  uint32_t reserved;
  char arch[64];        /**< as pg_device_properties.target: "sm_90", "x86_64-znver3" */
  pg_capabilities caps; /**< what codegen may assume (caps.struct_size set by the caller) */
} pg_target;

/** Compiler role (ABI 1.3, optional): render and compile for a target with no device open,
 *  so a plugin with zero devices (no driver, no GPU) still compiles ("compile-only"). */
typedef struct pg_compiler_api {
  uint32_t struct_size;
  uint32_t binary_format; /**< pg_artifact_format of compile's output; 0 when no compile */
  /** Fill `out` (the caller sets out->struct_size and out->caps.struct_size) for architecture
   *  `arch`, or for the plugin's default target when arch is "". PG_ERR_UNSUPPORTED naming
   *  the architecture when the plugin cannot compile for it. */
  pg_status (*describe_target)(pg_plugin_state_t state, const char* arch, pg_target* out,
                               pg_error* err);
  /** Render `program` for `target` into `out`, as pg_renderer_api.render does for a device. */
  pg_status (*render)(pg_plugin_state_t state, const pg_target* target,
                      const pg_kernel_program* program, pg_byte_sink* out, pg_error* err);
  /** Optional. Compile a rendered artifact into the binary_format bytes a device's
   *  load_program accepts (e.g. CUDA source -> cubin, C -> object code). */
  pg_status (*compile)(pg_plugin_state_t state, const pg_target* target, const void* artifact,
                       uint64_t size, const pg_program_info* info, pg_byte_sink* out,
                       pg_error* err);
  /** Optional. 1 when the renderer takes `op` on `dtype` in `vcount` lanes for `target`, 0 when
   *  not; the host asks before it renders. NULL: every op of the plugin's ISA on every dtype
   *  of caps.dtype_mask up to max_vector_lanes. */
  int32_t (*op_support)(pg_plugin_state_t state, const pg_target* target, uint32_t op,
                        uint32_t dtype, uint32_t vcount);
} pg_compiler_api;

/** Asynchronous work (ABI 1.3, optional; pg_plugin.async). A stream runs the copies and
 *  launches enqueued on it in order, concurrently with the caller and with other streams; an
 *  event marks a point in a stream that another stream or the host waits for. The work of
 *  loader->launch and the blocking copies is ordered with none of it: a caller that mixes them
 *  synchronises first. Memory handed to an async copy (and the launch's buffers) must stay
 *  valid until the stream has passed that point; pinned host memory lets a device copy while
 *  it computes. An error of enqueued work (a kernel that fails) is reported, with the
 *  kernel's name, by the next stream_synchronize or event_synchronize that covers it and by
 *  loader->synchronize, once; the stream then takes work again. A plugin that fills this
 *  table declares PG_CAP_ASYNC. */
typedef struct pg_async_api {
  uint32_t struct_size;
  uint32_t reserved;
  pg_status (*stream_create)(pg_device_t device, pg_stream_t* out, pg_error* err);
  /** Waits for the stream's work, then releases it; errors not yet reported are dropped. */
  void (*stream_destroy)(pg_device_t device, pg_stream_t stream);
  /** Waits until every item enqueued on the stream has run. */
  pg_status (*stream_synchronize)(pg_device_t device, pg_stream_t stream, pg_error* err);
  pg_status (*copy_in_async)(pg_device_t device, pg_stream_t stream, pg_buffer_t dst,
                             uint64_t dst_offset, const void* src, uint64_t nbytes, pg_error* err);
  pg_status (*copy_out_async)(pg_device_t device, pg_stream_t stream, void* dst, pg_buffer_t src,
                              uint64_t src_offset, uint64_t nbytes, pg_error* err);
  /** Enqueue a launch; `args` and its arrays are read before the call returns. */
  pg_status (*launch_async)(pg_device_t device, pg_stream_t stream, pg_program_t program,
                            const pg_launch_args* args, pg_error* err);
  pg_status (*event_create)(pg_device_t device, pg_event_t* out, pg_error* err);
  void (*event_destroy)(pg_device_t device, pg_event_t event);
  /** Mark the point the stream has reached with everything enqueued so far. Recording again
   *  moves the mark. An event never recorded is complete. */
  pg_status (*event_record)(pg_device_t device, pg_event_t event, pg_stream_t stream,
                            pg_error* err);
  /** Work enqueued on `stream` after this waits until `event`'s point is reached. */
  pg_status (*stream_wait_event)(pg_device_t device, pg_stream_t stream, pg_event_t event,
                                 pg_error* err);
  /** The host waits until `event`'s point is reached. */
  pg_status (*event_synchronize)(pg_device_t device, pg_event_t event, pg_error* err);
  /** Optional. Host memory the device copies from and to without staging (page-locked). */
  pg_status (*host_alloc_pinned)(pg_device_t device, uint64_t nbytes, void** out, pg_error* err);
  /** Optional (with host_alloc_pinned). NULL is ignored. */
  void (*host_free_pinned)(pg_device_t device, void* host);
  /** Optional. Enqueue on `stream` of `dst_device` a copy from a buffer of `src_device`, another
   *  device of this plugin (peer to peer). The source's own work is not waited for: record an
   *  event on its stream and have `stream` wait for it, or synchronise it first. */
  pg_status (*copy_peer_async)(pg_device_t dst_device, pg_stream_t stream, pg_buffer_t dst,
                               uint64_t dst_offset, pg_device_t src_device, pg_buffer_t src,
                               uint64_t src_offset, uint64_t nbytes, pg_error* err);
  /** Optional (ABI 1.4). The stream as the device's own API knows it (a CUstream on CUDA), or
   *  NULL: for the vendor's libraries (NCCL through a ccl plugin) to enqueue their work on the
   *  caller's stream. Valid until the stream is destroyed. Read it through PG_HAS_FIELD. */
  void* (*native_stream)(pg_device_t device, pg_stream_t stream);
} pg_async_api;

/* ----------------------------------------------------------------------------------------- */
/* The plugin table                                                                          */
/* ----------------------------------------------------------------------------------------- */

/** What PG_PLUGIN_ENTRY returns: a static table. The host reads abi_major, abi_minor and
 *  struct_size before anything else and refuses a major it does not speak or a minor newer
 *  than its own. */
typedef struct pg_plugin {
  uint32_t abi_major;            /**< PG_PLUGIN_ABI_MAJOR the plugin was built with */
  uint32_t abi_minor;            /**< PG_PLUGIN_ABI_MINOR the plugin was built with */
  uint32_t struct_size;          /**< sizeof(pg_plugin) the plugin was built with */
  uint32_t isa_version;          /**< PG_KERNEL_ISA_VERSION the plugin renders */
  const char* name;              /**< plugin name, e.g. "cpu_clang" */
  const char* version;           /**< plugin's own version, e.g. "0.1.0" */
  const char* device_prefix;     /**< device names are prefix, prefix:1, ... e.g. "cpu" */
  const pg_option_desc* options; /**< option schema; option_count entries */
  uint32_t option_count;
  uint32_t reserved;
  /** Initialise. Keep it cheap: defer heavy work (compilers, drivers) to first use.
   *  On failure the host reports err and never calls the plugin again. */
  pg_status (*init)(const pg_host_services* host, pg_plugin_state_t* state, pg_error* err);
  /** Optional. Release the state at process exit. The library is never unloaded. */
  void (*shutdown)(pg_plugin_state_t state);
  /** Number of usable devices. When it is 0, err says why (e.g. "no CUDA driver"). */
  pg_status (*device_count)(pg_plugin_state_t state, uint32_t* count, pg_error* err);
  /** Open device `index`. Opening the same index twice returns the same handle. */
  pg_status (*device_open)(pg_plugin_state_t state, uint32_t index, pg_device_t* out,
                           pg_error* err);
  /** Fill `props` (the caller sets props->struct_size and props->caps.struct_size). */
  pg_status (*device_properties)(pg_device_t device, pg_device_properties* props, pg_error* err);
  const pg_allocator_api* allocator;
  const pg_renderer_api* renderer;
  const pg_loader_api* loader;
  /* ABI 1.3 (read through PG_HAS_FIELD) */
  const pg_compiler_api* compiler; /**< optional: render and compile without a device */
  const pg_async_api* async;       /**< optional: streams, events, pinned memory */
} pg_plugin;

/** Type of the entry point. */
typedef const pg_plugin* (*pg_plugin_entry_fn)(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* POLYGRAD_PLUGIN_H */
