/* The Kiln host runtime: error codes and the replaceable error handler.
 *
 * Every generated kernel returns 0 on success or one of the negative codes
 * below, after reporting a one-line message through the error handler (by
 * default: printed to stderr). Replace the handler to route messages into an
 * application's own logging. */
#ifndef KILN_RUNTIME_H
#define KILN_RUNTIME_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum kiln_error_code {
    kiln_success = 0,
    kiln_error_generic = -1,
    kiln_error_buffer_is_null = -2,         /* a halide_buffer_t* argument is null */
    kiln_error_host_is_null = -3,           /* a buffer has no host memory */
    kiln_error_bad_type = -4,               /* element type differs from the declared one */
    kiln_error_bad_dimensions = -5,         /* wrong number of dimensions */
    kiln_error_input_too_small = -6,        /* an input does not cover the region the kernel reads */
    kiln_error_output_too_small = -7,       /* an output does not cover the region the kernel writes */
    kiln_error_bad_stride = -8,             /* the innermost dimension is not dense (stride 1) */
    kiln_error_bad_extent = -9,             /* negative or overflowing extent */
    kiln_error_out_of_memory = -10,         /* an intermediate could not be allocated */
    kiln_error_param_out_of_range = -11,    /* a scalar parameter violates its declared range */
    kiln_error_buffers_overlap = -12,       /* an output aliases an input where that is unsafe */
    kiln_error_bound_too_small = -13,       /* a Func's bound() does not cover what its consumers read */
    kiln_error_specialize_fail = -14,       /* no specialization applies and the schedule said specialize_fail */
    kiln_error_constraint_violated = -15,   /* a buffer breaks a Dimension::set_min/set_extent/set_stride constraint */
    kiln_error_bad_split_factor = -16,      /* a split factor computed at run time (Params, buffer fields) is not positive */
    kiln_error_output_too_large = -17,      /* an output computed at another output's loop is larger than what that loop computes */
    kiln_error_npu = -20,                   /* the NPU simulator rejected the kernel (capacity, bounds, race, deadlock) */
};

typedef void (*kiln_error_handler_t)(const char *message);

/* Replace the error handler; NULL restores the default (stderr). Returns the
 * previous handler. */
kiln_error_handler_t kiln_set_error_handler(kiln_error_handler_t handler);

/* Report an error through the current handler (printf-style, one line). */
void kiln_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The checks every kernel makes of its buffer arguments on entry (with the
 * kernel's and the argument's names for the message). kiln_check_buffer: non-null,
 * host memory, element type (a halide_type_code_t and bits), dimensionality,
 * a dense dimension 0, extents that int32 indexing can reach.
 * kiln_check_no_overlap: output `out` shares no memory with input `in`.
 * Each reports and returns a kiln_error_code, or 0. An empty buffer (an
 * extent of 0) may have no host memory; a kernel whose outputs are all
 * empty returns 0 after the checks (kiln_buffer_is_empty: 1 if empty). */
struct halide_buffer_t;
int kiln_check_buffer(const struct halide_buffer_t *b, const char *kernel, const char *name, int type_code, int bits,
                      int dimensions);
int kiln_buffer_is_empty(const struct halide_buffer_t *b);
int kiln_check_no_overlap(const struct halide_buffer_t *in, const struct halide_buffer_t *out, const char *kernel,
                          const char *in_name, const char *out_name);

/* Storage of kernels' intermediates (kiln_heap, kiln_prologue.h): a
 * 64-byte-aligned block of at least `bytes` bytes, taken from the calling
 * thread's cache of freed blocks or newly allocated, with its real size in
 * *size; NULL when out of memory. kiln_heap_free keeps the block (`size` as
 * kiln_heap_alloc gave it) for the thread's next allocation, or frees it.
 * A thread keeps blocks of up to kiln_heap_small_max bytes in one cache of
 * at most kiln_heap_small_slots blocks and kiln_heap_small_keep bytes, and
 * larger ones in another (kiln_heap_large_slots, kiln_heap_large_keep);
 * they are freed when the thread ends. kiln_heap_kept (for tests): the
 * number of blocks the calling thread keeps in the small (large = 0) or
 * large cache, and up to `max` of them with their sizes. */
enum {
    kiln_heap_small_max = 1 << 20,
    kiln_heap_small_slots = 16,
    kiln_heap_small_keep = 4 << 20,
    kiln_heap_large_slots = 4,
    kiln_heap_large_keep = 256 << 20,
};
void *kiln_heap_alloc(size_t bytes, size_t *size);
void kiln_heap_free(void *block, size_t size);
int kiln_heap_kept(int large, void **blocks, size_t *sizes, int max);

/* Threads used by parallel loops: $KILN_NUM_THREADS, else the core count. */
int kiln_num_threads(void);

/* Tracing (target feature "trace"): a kernel compiled with it reports every
 * store of `lanes` values into a Func (or output) and every allocation of a
 * Func's storage. The counts accumulate per name until kiln_trace_reset();
 * the fusion report's points_computed and realizations must equal them. */
void kiln_trace_store(const char *func, int lanes);
void kiln_trace_realize(const char *func);
void kiln_trace_reset(void);
long long kiln_trace_stores(const char *func);
long long kiln_trace_realizations(const char *func);
/* Where a kernel's events go (kind 0: stores, 1: realizations); the JIT
 * points a loaded kernel's copy of the runtime at the process's counters. */
typedef void (*kiln_trace_sink_t)(const char *func, int kind, long long count);
void kiln_set_trace_sink(kiln_trace_sink_t sink);
void kiln_trace_event(const char *func, int kind, long long count);

#ifdef __cplusplus
}
#endif

#endif
