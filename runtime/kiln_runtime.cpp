// The Kiln host runtime: the replaceable error handler, trace counters and
// the thread count of parallel loops (declared in kiln_runtime.h).
//
// This file is compiled into libkiln, and its text is also appended to every
// JIT-compiled kernel so that a shared object is self-contained. The JIT then
// points the kernel's copy of the handler at libkiln's kiln_error, so a
// handler installed in the process sees every message. The last message is
// kept for callers that turn a failing return code into an exception.
//
// Because every JIT compilation parses this file, it includes only C headers
// and keeps its state in plain arrays guarded by a spin lock: <mutex>,
// <string> and <map> alone would cost g++ more than the kernel does.
#ifndef KILN_RUNTIME_H  // already declared when appended to an emitted kernel
#include "kiln_runtime.h"
#endif

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <HalideRuntime.h>
#include <sched.h>

namespace {

void kiln_default_error_handler(const char *message) { fprintf(stderr, "kiln: %s\n", message); }

kiln_error_handler_t kiln_current_handler = nullptr;  // null: the default; atomic accesses only

// A lock for the rarely touched state below (messages, trace counts).
struct kiln_spin_lock {
    int *flag;
    explicit kiln_spin_lock(int *f) : flag(f) {
        while (__atomic_exchange_n(flag, 1, __ATOMIC_ACQUIRE)) sched_yield();
    }
    ~kiln_spin_lock() { __atomic_store_n(flag, 0, __ATOMIC_RELEASE); }
};

int kiln_message_lock = 0;
char kiln_last_message[1024];

void kiln_keep_message(const char *message) {
    kiln_spin_lock lock(&kiln_message_lock);
    snprintf(kiln_last_message, sizeof(kiln_last_message), "%s", message);
}

}  // namespace

extern "C" kiln_error_handler_t kiln_set_error_handler(kiln_error_handler_t handler) {
    return __atomic_exchange_n(&kiln_current_handler, handler, __ATOMIC_ACQ_REL);
}

extern "C" void kiln_error(const char *fmt, ...) {
    char message[1024];
    va_list args;
    va_start(args, fmt);
    vsnprintf(message, sizeof(message), fmt, args);
    va_end(args);
    kiln_keep_message(message);
    kiln_error_handler_t handler = __atomic_load_n(&kiln_current_handler, __ATOMIC_ACQUIRE);
    (handler ? handler : kiln_default_error_handler)(message);
}

// For JIT kernels, whose failures the caller turns into exceptions: keep
// the message and pass it to a handler the user installed, but do not print
// it through the default handler.
extern "C" void kiln_error_from_jit(const char *message) {
    kiln_keep_message(message);
    if (kiln_error_handler_t handler = __atomic_load_n(&kiln_current_handler, __ATOMIC_ACQUIRE)) handler(message);
}

// The latest message reported by any thread ("" if none). The pointer stays
// valid until this thread calls it again.
extern "C" const char *kiln_last_error_message(void) {
    static thread_local char copy[sizeof(kiln_last_message)];
    kiln_spin_lock lock(&kiln_message_lock);
    memcpy(copy, kiln_last_message, sizeof(copy));
    return copy;
}

// Trace counts per Func name: a list searched linearly (a pipeline has a
// few Funcs, and tracing is for tests).
namespace {
struct kiln_trace_count {
    char *name;
    long long count[2];  // stores, realizations
    kiln_trace_count *next;
};
int kiln_trace_lock = 0;
kiln_trace_count *kiln_trace_counts = nullptr;
kiln_trace_sink_t kiln_trace_sink = nullptr;  // atomic accesses only

kiln_trace_count *kiln_trace_find(const char *func, bool create) {
    for (kiln_trace_count *c = kiln_trace_counts; c; c = c->next)
        if (strcmp(c->name, func) == 0) return c;
    if (!create) return nullptr;
    kiln_trace_count *c = (kiln_trace_count *)calloc(1, sizeof(kiln_trace_count));
    if (!c || !(c->name = strdup(func))) {
        free(c);
        return nullptr;
    }
    c->next = kiln_trace_counts;
    kiln_trace_counts = c;
    return c;
}
}  // namespace

extern "C" void kiln_trace_event(const char *func, int kind, long long count) {
    kiln_spin_lock lock(&kiln_trace_lock);
    if (kiln_trace_count *c = kiln_trace_find(func, true)) c->count[kind == 0 ? 0 : 1] += count;
}
extern "C" void kiln_set_trace_sink(kiln_trace_sink_t sink) { __atomic_store_n(&kiln_trace_sink, sink, __ATOMIC_RELEASE); }
static void kiln_trace_send(const char *func, int kind, long long count) {
    kiln_trace_sink_t sink = __atomic_load_n(&kiln_trace_sink, __ATOMIC_ACQUIRE);
    (sink ? sink : kiln_trace_event)(func, kind, count);
}
extern "C" void kiln_trace_store(const char *func, int lanes) { kiln_trace_send(func, 0, lanes); }
extern "C" void kiln_trace_realize(const char *func) { kiln_trace_send(func, 1, 1); }
extern "C" void kiln_trace_reset(void) {
    kiln_spin_lock lock(&kiln_trace_lock);
    for (kiln_trace_count *c = kiln_trace_counts; c; c = c->next) c->count[0] = c->count[1] = 0;
}
static long long kiln_trace_get(const char *func, int kind) {
    kiln_spin_lock lock(&kiln_trace_lock);
    kiln_trace_count *c = kiln_trace_find(func, false);
    return c ? c->count[kind == 0 ? 0 : 1] : 0;
}
extern "C" long long kiln_trace_stores(const char *func) { return kiln_trace_get(func, 0); }
extern "C" long long kiln_trace_realizations(const char *func) { return kiln_trace_get(func, 1); }

// ---- Storage of kernels' intermediates (kiln_heap, kiln_prologue.h) ----
//
// Here rather than in the prologue: compiled once, not inlined (and its
// loops unrolled by g++ -O3) at every intermediate of every kernel.
namespace {

// Blocks a thread's kiln_heaps freed, kept for its next ones, up to `Slots`
// blocks and `MaxBytes` bytes; freed when the thread ends. A stack: the
// intermediates of a loop body are allocated in one order and freed in the
// reverse, so the next iteration's first allocation finds its block on top.
template<int Slots, size_t MaxBytes>
struct kiln_block_cache {
    void *ptr[Slots] = {};  // [0, count) kept, the last freed on top
    size_t size[Slots] = {};
    int count = 0;
    size_t bytes = 0;
    ~kiln_block_cache() {
        for (int i = 0; i < count; i++) free(ptr[i]);
    }

    void remove(int i) {
        bytes -= size[i];
        for (; i + 1 < count; i++) ptr[i] = ptr[i + 1], size[i] = size[i + 1];
        count--;
        ptr[count] = nullptr, size[count] = 0;
    }

    // A kept block of at least `want` bytes (the top one, else the
    // smallest), or null.
    void *take(size_t want, size_t *got) {
        int best = -1;
        if (count > 0 && size[count - 1] >= want) best = count - 1;
        else
            for (int i = 0; i < count; i++)
                if (size[i] >= want && (best < 0 || size[i] < size[best])) best = i;
        if (best < 0) return nullptr;
        void *p = ptr[best];
        *got = size[best];
        remove(best);
        return p;
    }

    // Keeps `p` (of `n` bytes) on top, dropping smaller kept blocks to stay
    // within the bounds; or frees it.
    void give(void *p, size_t n) {
        if (n > MaxBytes) return free(p);
        while (count == Slots || bytes + n > MaxBytes) {
            int smallest = 0;
            for (int i = 1; i < count; i++)
                if (size[i] < size[smallest]) smallest = i;
            if (size[smallest] > n) return free(p);
            free(ptr[smallest]);
            remove(smallest);
        }
        ptr[count] = p, size[count] = n;
        count++;
        bytes += n;
    }

    int kept(void **blocks, size_t *sizes, int max) const {
        for (int i = 0; i < count && i < max; i++) blocks[i] = ptr[i], sizes[i] = size[i];
        return count;
    }
};

// Small blocks (up to kiln_heap_small_max bytes): an intermediate computed
// per row (compute_at a row loop, with a width known only at run time) is
// allocated once per row, and a backward pass keeps several such rows live
// at once (softmax_grad: nine). glibc's aligned_alloc and free of them per
// row had cost softmax ~8% and softmax_grad ~15% of its time.
using kiln_small_cache = kiln_block_cache<kiln_heap_small_slots, kiln_heap_small_keep>;
kiln_small_cache &kiln_thread_small_cache() {
    static thread_local kiln_small_cache cache;
    return cache;
}

// Larger blocks, kept for the kernel's next call: glibc gives a block above
// its mmap threshold (32 MiB at most) back to the system on free, so every
// call of a kernel with a large intermediate computed at the root faulted
// its pages in again, zeroed by the kernel (a fifth of blur3x3_grad's time
// at 4096x4096). A block larger than kiln_heap_large_keep is never kept.
using kiln_large_cache = kiln_block_cache<kiln_heap_large_slots, kiln_heap_large_keep>;
kiln_large_cache &kiln_thread_large_cache() {
    static thread_local kiln_large_cache cache;
    return cache;
}

}  // namespace

// A small cache's blocks are all at most kiln_heap_small_max bytes (each was
// allocated for such a request, or taken from that cache for one) and a
// large cache's all above it, so the size says which cache a block goes back to.
extern "C" void *kiln_heap_alloc(size_t bytes, size_t *size) {
    void *p = bytes <= kiln_heap_small_max ? kiln_thread_small_cache().take(bytes, size)
                                            : kiln_thread_large_cache().take(bytes, size);
    if (p) return p;
    *size = bytes;
    return aligned_alloc(64, bytes);
}

extern "C" void kiln_heap_free(void *block, size_t size) {
    if (size <= kiln_heap_small_max) kiln_thread_small_cache().give(block, size);
    else kiln_thread_large_cache().give(block, size);
}

extern "C" int kiln_heap_kept(int large, void **blocks, size_t *sizes, int max) {
    return large ? kiln_thread_large_cache().kept(blocks, sizes, max)
                 : kiln_thread_small_cache().kept(blocks, sizes, max);
}

extern "C" int kiln_num_threads(void) {
    if (const char *s = getenv("KILN_NUM_THREADS")) {
        int n = atoi(s);
        if (n > 0) return n;
    }
    static int cores = 0;  // the cores this process may run on, counted once
    if (int n = __atomic_load_n(&cores, __ATOMIC_RELAXED)) return n;
    cpu_set_t cpus;
    int n = sched_getaffinity(0, sizeof(cpus), &cpus) == 0 && CPU_COUNT(&cpus) > 0 ? CPU_COUNT(&cpus) : 1;
    __atomic_store_n(&cores, n, __ATOMIC_RELAXED);
    return n;
}

// ---- Argument checks of every kernel ----

// "float32", "uint8", "bool" (uint1), "int32x4" into buf.
static const char *kiln_type_name(halide_type_t t, char *buf, size_t size) {
    static const char *const codes[] = {"int", "uint", "float", "handle", "bfloat"};
    const char *code = t.code < 5 ? codes[t.code] : "unknown";
    if (t.code == halide_type_uint && t.bits == 1) snprintf(buf, size, "bool");
    else snprintf(buf, size, "%s%d", code, (int)t.bits);
    if (t.lanes > 1) {
        size_t n = strlen(buf);
        snprintf(buf + n, size - n, "x%d", (int)t.lanes);
    }
    return buf;
}

extern "C" int kiln_buffer_is_empty(const halide_buffer_t *b) {
    for (int d = 0; d < b->dimensions; d++)
        if (b->dim[d].extent == 0) return 1;
    return 0;
}

// Checks a buffer argument on entry to `kernel`: non-null, host memory, the
// declared element type and dimensionality, dense dimension 0, and no
// negative extent. Reports and returns the error code, or 0.
extern "C" int kiln_check_buffer(const halide_buffer_t *b, const char *kernel, const char *name, int code, int bits,
                                 int dimensions) {
    if (!b) {
        kiln_error("%s: buffer argument '%s' is null", kernel, name);
        return kiln_error_buffer_is_null;
    }
    if (!b->host && !kiln_buffer_is_empty(b)) {  // an empty buffer needs no memory
        kiln_error("%s: buffer argument '%s' has no host memory (host is null)", kernel, name);
        return kiln_error_host_is_null;
    }
    if (b->type.code != code || b->type.bits != bits || b->type.lanes != 1) {
        char want[32], got[32];
        halide_type_t w;
        w.code = (halide_type_code_t)code;
        w.bits = (uint8_t)bits;
        w.lanes = 1;
        kiln_error("%s: buffer argument '%s' has the wrong element type: expected %s, got %s", kernel, name,
                   kiln_type_name(w, want, sizeof(want)), kiln_type_name(b->type, got, sizeof(got)));
        return kiln_error_bad_type;
    }
    if (b->dimensions != dimensions) {
        kiln_error("%s: buffer argument '%s' has %d dimensions, expected %d", kernel, name, (int)b->dimensions,
                   dimensions);
        return kiln_error_bad_dimensions;
    }
    if (dimensions > 0 && b->dim[0].stride != 1) {
        kiln_error("%s: buffer argument '%s' has stride %d in dimension 0, expected 1 (dimension 0 must be dense)",
                   kernel, name, (int)b->dim[0].stride);
        return kiln_error_bad_stride;
    }
    // Kernels index with 32-bit integers: every coordinate and every element
    // offset must fit in int32.
    long long span = 0;
    for (int d = 0; d < dimensions; d++) {
        const halide_dimension_t &dim = b->dim[d];
        if (dim.extent < 0) {
            kiln_error("%s: buffer argument '%s' has negative extent %d in dimension %d", kernel, name,
                       (int)dim.extent, d);
            return kiln_error_bad_extent;
        }
        if ((long long)dim.min + dim.extent - 1 > INT32_MAX) {
            kiln_error("%s: buffer argument '%s' covers [%d, %lld] in dimension %d, past the largest coordinate %d",
                       kernel, name, (int)dim.min, (long long)dim.min + dim.extent - 1, d, INT32_MAX);
            return kiln_error_bad_extent;
        }
        span += (long long)(dim.extent > 0 ? dim.extent - 1 : 0) * (dim.stride < 0 ? -(long long)dim.stride : dim.stride);
    }
    if (span > INT32_MAX) {
        kiln_error("%s: buffer argument '%s' spans %lld elements, more than the %d a kernel can index", kernel, name,
                   span + 1, INT32_MAX);
        return kiln_error_bad_extent;
    }
    return 0;
}

// The bytes [*lo, *hi) that b's elements occupy; false if b is empty.
static bool kiln_buffer_span(const halide_buffer_t *b, const char **lo, const char **hi) {
    long long first = 0, last = 0;
    for (int d = 0; d < b->dimensions; d++) {
        if (b->dim[d].extent <= 0) return false;
        long long reach = (long long)(b->dim[d].extent - 1) * b->dim[d].stride;
        (reach < 0 ? first : last) += reach;
    }
    long long bytes = (b->type.bits + 7) / 8 * (long long)b->type.lanes;
    *lo = (const char *)b->host + first * bytes;
    *hi = (const char *)b->host + (last + 1) * bytes;
    return true;
}

// Checks that output `out` shares no memory with input `in` (both already
// checked by kiln_check_buffer). Reports and returns the error code, or 0.
extern "C" int kiln_check_no_overlap(const halide_buffer_t *in, const halide_buffer_t *out, const char *kernel,
                                     const char *in_name, const char *out_name) {
    const char *a0, *a1, *b0, *b1;
    if (!kiln_buffer_span(in, &a0, &a1) || !kiln_buffer_span(out, &b0, &b1)) return 0;
    if (a1 <= b0 || b1 <= a0) return 0;
    long long shared = (long long)((a1 < b1 ? a1 : b1) - (a0 > b0 ? a0 : b0));
    kiln_error("%s: output '%s' overlaps input '%s' (%lld bytes shared); the kernel may overwrite values it has "
               "yet to read, so give the output its own memory",
               kernel, out_name, in_name, shared);
    return kiln_error_buffers_overlap;
}
