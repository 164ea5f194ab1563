// The Kiln host runtime: the replaceable error handler and the thread count
// of parallel loops (declared in kiln_runtime.h).
//
// This file is compiled into libkiln, and its text is also appended to every
// JIT-compiled kernel so that a shared object is self-contained. The JIT then
// points the kernel's copy of the handler at libkiln's kiln_error, so a
// handler installed in the process sees every message. The last message is
// kept for callers that turn a failing return code into an exception.
#ifndef KILN_RUNTIME_H  // already declared when appended to an emitted kernel
#include "kiln_runtime.h"
#endif

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace {

void kiln_default_error_handler(const char *message) { std::fprintf(stderr, "kiln: %s\n", message); }

std::atomic<kiln_error_handler_t> kiln_current_handler{nullptr};  // null: the default
std::mutex kiln_last_message_mutex;
std::string kiln_last_message;

}  // namespace

extern "C" kiln_error_handler_t kiln_set_error_handler(kiln_error_handler_t handler) {
    return kiln_current_handler.exchange(handler);
}

extern "C" void kiln_error(const char *fmt, ...) {
    char message[1024];
    va_list args;
    va_start(args, fmt);
    std::vsnprintf(message, sizeof(message), fmt, args);
    va_end(args);
    {
        std::lock_guard<std::mutex> lock(kiln_last_message_mutex);
        kiln_last_message = message;
    }
    kiln_error_handler_t handler = kiln_current_handler.load();
    (handler ? handler : kiln_default_error_handler)(message);
}

// For JIT kernels, whose failures the caller turns into exceptions: keep
// the message and pass it to a handler the user installed, but do not print
// it through the default handler.
extern "C" void kiln_error_from_jit(const char *message) {
    {
        std::lock_guard<std::mutex> lock(kiln_last_message_mutex);
        kiln_last_message = message;
    }
    if (kiln_error_handler_t handler = kiln_current_handler.load()) handler(message);
}

// The latest message reported by any thread ("" if none). The pointer stays
// valid until this thread calls it again.
extern "C" const char *kiln_last_error_message(void) {
    thread_local std::string copy;
    std::lock_guard<std::mutex> lock(kiln_last_message_mutex);
    copy = kiln_last_message;
    return copy.c_str();
}

namespace {
std::mutex kiln_trace_mutex;
std::map<std::string, std::pair<long long, long long>> kiln_trace_counts;  // stores, realizations
std::atomic<kiln_trace_sink_t> kiln_trace_sink{nullptr};
}  // namespace

extern "C" void kiln_trace_event(const char *func, int kind, long long count) {
    std::lock_guard<std::mutex> lock(kiln_trace_mutex);
    auto &c = kiln_trace_counts[func];
    (kind == 0 ? c.first : c.second) += count;
}
extern "C" void kiln_set_trace_sink(kiln_trace_sink_t sink) { kiln_trace_sink.store(sink); }
static void kiln_trace_send(const char *func, int kind, long long count) {
    kiln_trace_sink_t sink = kiln_trace_sink.load();
    (sink ? sink : kiln_trace_event)(func, kind, count);
}
extern "C" void kiln_trace_store(const char *func, int lanes) { kiln_trace_send(func, 0, lanes); }
extern "C" void kiln_trace_realize(const char *func) { kiln_trace_send(func, 1, 1); }
extern "C" void kiln_trace_reset(void) {
    std::lock_guard<std::mutex> lock(kiln_trace_mutex);
    kiln_trace_counts.clear();
}
static long long kiln_trace_get(const char *func, int kind) {
    std::lock_guard<std::mutex> lock(kiln_trace_mutex);
    auto it = kiln_trace_counts.find(func);
    if (it == kiln_trace_counts.end()) return 0;
    return kind == 0 ? it->second.first : it->second.second;
}
extern "C" long long kiln_trace_stores(const char *func) { return kiln_trace_get(func, 0); }
extern "C" long long kiln_trace_realizations(const char *func) { return kiln_trace_get(func, 1); }

extern "C" int kiln_num_threads(void) {
    if (const char *s = std::getenv("KILN_NUM_THREADS")) {
        int n = std::atoi(s);
        if (n > 0) return n;
    }
#ifdef _OPENMP
    return omp_get_num_procs();
#else
    unsigned n = std::thread::hardware_concurrency();
    return n > 0 ? (int)n : 1;
#endif
}
