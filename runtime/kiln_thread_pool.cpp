// The Kiln thread pool: kiln_parallel_for (declared in kiln_runtime.h), what
// every `parallel` loop of a host kernel calls.
//
//   kiln_parallel_for("f.s0.y", 0, 64, task, closure)
//   -> task(closure, 0) ... task(closure, 63), spread over the caller and the
//      pool's workers; the first nonzero result is returned.
//
// Workers are created on first use (kiln_num_threads() - 1 of them, more if
// a later loop asks for more) and sleep on a futex between loops after a
// brief spin, so an idle pool costs nothing and a loaded machine is not made
// busier. A loop is published into one slot: the caller and the workers
// claim chunks of iterations with an atomic counter (a few chunks per
// thread, so a thread the OS preempts delays only the chunk it holds), and
// the caller waits until every iteration has finished, counted, not until
// every worker has checked in. A loop inside a task, a loop of one
// iteration, and a loop started while another thread's loop holds the pool
// all run serially on the calling thread.
//
// Publishing follows a sequence lock: `generation` is odd while the slot is
// rewritten, and the publisher first waits until no worker is inside the
// slot (`active`), so a worker that wakes late never runs an old task with a
// new loop's indices. At exit (or when a shared object holding this copy is
// unloaded) the workers are told to stop and joined.
//
// Like the rest of the runtime, this file is also compiled into every JIT
// module; the JIT points a module's kiln_parallel_for at the process's
// (kiln_set_parallel_runner), so all kernels share one pool.
#ifndef KILN_RUNTIME_H  // already declared when appended to an emitted kernel
#include "kiln_runtime.h"
#endif

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace {

void kiln_futex_wait(int *word, int expected) {
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}
void kiln_futex_wake(int *word) { syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 0x7fffffff, nullptr, nullptr, 0); }

// Spins up to `spins` times while *word == value; true once it differs.
bool kiln_spin_while(const int *word, int value, int spins) {
    for (int i = 0; i < spins; i++) {
        if (__atomic_load_n(word, __ATOMIC_ACQUIRE) != value) return true;
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
    return __atomic_load_n(word, __ATOMIC_ACQUIRE) != value;
}

struct kiln_loop {
    kiln_task_t task;
    void *closure;
    int lo, extent;
    int chunk;    // iterations claimed at a time
    int workers;  // how many workers take part (ids 0 .. workers-1)
    int next;     // the next iteration to claim
    int done;     // iterations finished; the caller's futex word
    int error;    // the first nonzero result
};

const int kiln_max_workers = 255;

struct kiln_pool {
    int generation;  // odd while the slot is being rewritten; the workers' futex word
    int active;      // workers inside the slot
    int busy;        // a caller owns the pool
    int stop;        // set at exit: workers return
    int started;     // workers created
    int start_lock;
    pthread_t threads[kiln_max_workers];
    kiln_loop loop;
    ~kiln_pool();
};
kiln_pool kiln_the_pool;
thread_local bool kiln_in_task = false;
kiln_parallel_for_t kiln_parallel_runner = nullptr;  // atomic accesses only

const int kiln_spin_count = 2000;  // some microseconds of spinning before sleeping

// Claims and runs chunks of `l` until none are left.
void kiln_run_iterations(kiln_loop &l) {
    const bool outer = kiln_in_task;
    kiln_in_task = true;
    for (;;) {
        const int first = __atomic_fetch_add(&l.next, l.chunk, __ATOMIC_RELAXED);
        if (first >= l.extent) break;
        const int end = l.extent - first < l.chunk ? l.extent : first + l.chunk;
        for (int i = first; i < end; i++) {
            if (__atomic_load_n(&l.error, __ATOMIC_RELAXED)) break;  // after a failure the rest are skipped
            int r;
            try {
                r = l.task(l.closure, l.lo + i);
            } catch (...) {
                r = kiln_error_generic;
            }
            int zero = 0;
            if (r) __atomic_compare_exchange_n(&l.error, &zero, r, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
        }
        if (__atomic_add_fetch(&l.done, end - first, __ATOMIC_ACQ_REL) == l.extent) kiln_futex_wake(&l.done);
    }
    kiln_in_task = outer;
}

void *kiln_worker_main(void *arg) {
    const int id = (int)(intptr_t)arg;
    kiln_pool &p = kiln_the_pool;
    int seen = 0;
    while (!__atomic_load_n(&p.stop, __ATOMIC_ACQUIRE)) {
        const int g = __atomic_load_n(&p.generation, __ATOMIC_SEQ_CST);
        if (g == seen || (g & 1)) {
            if (!kiln_spin_while(&p.generation, g, kiln_spin_count)) kiln_futex_wait(&p.generation, g);
            continue;
        }
        __atomic_add_fetch(&p.active, 1, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&p.generation, __ATOMIC_SEQ_CST) == g) {
            seen = g;
            if (id < p.loop.workers) kiln_run_iterations(p.loop);
        }
        __atomic_sub_fetch(&p.active, 1, __ATOMIC_SEQ_CST);
    }
    return nullptr;
}

// Stops and joins the workers (at exit, or when this copy is unloaded).
kiln_pool::~kiln_pool() {
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    __atomic_add_fetch(&generation, 2, __ATOMIC_SEQ_CST);
    kiln_futex_wake(&generation);
    const int n = __atomic_load_n(&started, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        if (!pthread_equal(threads[i], pthread_self())) pthread_join(threads[i], nullptr);
}

// Starts workers until there are `n` (or as many as the system allows);
// returns how many there are, at most n.
int kiln_start_workers(int n) {
    kiln_pool &p = kiln_the_pool;
    if (n > kiln_max_workers) n = kiln_max_workers;
    if (__atomic_load_n(&p.started, __ATOMIC_ACQUIRE) >= n) return n;
    while (__atomic_exchange_n(&p.start_lock, 1, __ATOMIC_ACQUIRE)) sched_yield();
    while (p.started < n) {
        if (pthread_create(&p.threads[p.started], nullptr, kiln_worker_main, (void *)(intptr_t)p.started) != 0) break;
        __atomic_add_fetch(&p.started, 1, __ATOMIC_RELEASE);
    }
    const int started = p.started;
    __atomic_store_n(&p.start_lock, 0, __ATOMIC_RELEASE);
    return started < n ? started : n;
}

int kiln_run_serially(int lo, int extent, kiln_task_t task, void *closure) {
    const bool outer = kiln_in_task;
    kiln_in_task = true;
    int r = 0;
    for (int i = 0; i < extent && !r; i++) r = task(closure, lo + i);
    kiln_in_task = outer;
    return r;
}

}  // namespace

extern "C" void kiln_set_parallel_runner(kiln_parallel_for_t runner) {
    __atomic_store_n(&kiln_parallel_runner, runner, __ATOMIC_RELEASE);
}

extern "C" int kiln_parallel_for(const char *name, int lo, int extent, kiln_task_t task, void *closure) {
    (void)name;
    if (kiln_parallel_for_t runner = __atomic_load_n(&kiln_parallel_runner, __ATOMIC_ACQUIRE))
        return runner(name, lo, extent, task, closure);
    if (extent <= 0) return 0;
    kiln_pool &p = kiln_the_pool;
    int threads = extent > 1 && !kiln_in_task ? kiln_num_threads() : 1;
    if (threads > extent) threads = extent;
    if (threads > 1 && __atomic_exchange_n(&p.busy, 1, __ATOMIC_ACQUIRE)) threads = 1;  // held by another thread
    if (threads <= 1) return kiln_run_serially(lo, extent, task, closure);
    const int workers = kiln_start_workers(threads - 1);

    // Publish the loop (see the top of the file).
    __atomic_add_fetch(&p.generation, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&p.active, __ATOMIC_SEQ_CST)) sched_yield();
    kiln_loop &l = p.loop;
    l.task = task;
    l.closure = closure;
    l.lo = lo;
    l.extent = extent;
    l.chunk = extent / ((workers + 1) * 8) > 1 ? extent / ((workers + 1) * 8) : 1;
    l.workers = workers;
    l.next = 0;
    l.done = 0;
    l.error = 0;
    __atomic_add_fetch(&p.generation, 1, __ATOMIC_SEQ_CST);
    kiln_futex_wake(&p.generation);

    kiln_run_iterations(l);
    for (int d; (d = __atomic_load_n(&l.done, __ATOMIC_ACQUIRE)) != extent;)
        if (!kiln_spin_while(&l.done, d, kiln_spin_count)) kiln_futex_wait(&l.done, d);
    const int error = __atomic_load_n(&l.error, __ATOMIC_RELAXED);
    __atomic_store_n(&p.busy, 0, __ATOMIC_RELEASE);
    return error;
}
