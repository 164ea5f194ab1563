// The runtime's thread pool (runtime/kiln_thread_pool.cpp): every iteration
// runs exactly once whatever the extent, the start and the thread count; a
// failing task's code comes back (an exception becomes kiln_error_generic);
// loops inside tasks run serially on the task's thread; many short loops in
// a row and loops from several user threads at once neither lose iterations
// nor hang. Then the same through JIT-compiled kernels, whose parallel loops
// run on the process's pool: a plain parallel loop, a failure inside the
// loop's body (its code and message reach the caller), and kernels called
// from several threads at once.
#include <catch2/catch.hpp>
#include <kiln/kiln.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <HalideBuffer.h>

#include "driver/JIT.h"
#include "kiln_runtime.h"

namespace {

// Runs f(i) for i in [lo, lo + extent) through kiln_parallel_for.
template<typename F>
int parallel(int lo, int extent, F f) {
    return kiln_parallel_for("test", lo, extent, [](void *c, int i) -> int { return (*(F *)c)(i); }, &f);
}

// Sets KILN_NUM_THREADS for the scope.
struct Threads {
    explicit Threads(int n) { setenv("KILN_NUM_THREADS", std::to_string(n).c_str(), 1); }
    ~Threads() { unsetenv("KILN_NUM_THREADS"); }
};

}  // namespace

TEST_CASE("thread pool: every iteration runs once", "[runtime][pool]") {
    for (int threads : {1, 2, 3, 4, 7}) {
        Threads t(threads);
        for (int lo : {0, -5, 7, -1}) {
            for (int extent : {0, 1, 2, 3, 5, 6, 100, 1001}) {
                INFO("threads " << threads << ", lo " << lo << ", extent " << extent);
                std::vector<std::atomic<int>> count(extent + 20);
                REQUIRE(parallel(lo, extent, [&](int i) {
                            count[i - lo + 10]++;
                            return 0;
                        }) == 0);
                int wrong = 0;
                for (int i = 0; i < extent + 20; i++) wrong += count[i].load() != (i >= 10 && i < extent + 10);
                CHECK(wrong == 0);
            }
        }
    }
}

TEST_CASE("thread pool: a negative extent runs nothing", "[runtime][pool]") {
    Threads t(2);
    std::atomic<int> ran{0};
    CHECK(parallel(3, -4, [&](int) {
              ran++;
              return 0;
          }) == 0);
    CHECK(ran.load() == 0);
}

TEST_CASE("thread pool: a failing task's code is returned", "[runtime][pool]") {
    Threads t(3);
    std::atomic<int> ran{0};
    int code = parallel(0, 200, [&](int i) {
        ran++;
        return i == 57 ? kiln_error_out_of_memory : 0;
    });
    CHECK(code == kiln_error_out_of_memory);
    CHECK(ran.load() >= 1);
    CHECK(ran.load() <= 200);
    // Every iteration failing: one of the codes comes back.
    CHECK(parallel(-3, 40, [&](int i) { return i % 2 ? kiln_error_bad_extent : kiln_error_bad_extent; }) ==
          kiln_error_bad_extent);
    // An exception thrown by a task becomes the generic error code.
    CHECK(parallel(0, 50, [&](int i) -> int {
              if (i == 3) throw std::runtime_error("task failed");
              return 0;
          }) == kiln_error_generic);
    // A failure of one iteration of a serial loop (one thread) too.
    {
        Threads one(1);
        CHECK(parallel(0, 10, [&](int i) { return i == 9 ? kiln_error_generic : 0; }) == kiln_error_generic);
    }
    // And the pool still works afterwards.
    std::atomic<int> sum{0};
    CHECK(parallel(0, 100, [&](int i) {
              sum += i;
              return 0;
          }) == 0);
    CHECK(sum.load() == 4950);
}

TEST_CASE("thread pool: a loop inside a task runs serially on the task's thread", "[runtime][pool]") {
    Threads t(4);
    std::atomic<int> total{0}, foreign{0};
    REQUIRE(parallel(0, 16, [&](int) {
                const std::thread::id me = std::this_thread::get_id();
                return parallel(0, 10, [&](int) {
                    total++;
                    if (std::this_thread::get_id() != me) foreign++;
                    return 0;
                });
            }) == 0);
    CHECK(total.load() == 160);
    CHECK(foreign.load() == 0);
    // A failing inner loop fails the outer one.
    CHECK(parallel(0, 8, [&](int i) { return parallel(0, 8, [&](int j) { return i == 5 && j == 2 ? -3 : 0; }); }) ==
          -3);
}

TEST_CASE("thread pool: many short loops in a row", "[runtime][pool]") {
    Threads t(2);
    std::atomic<long long> sum{0};
    for (int round = 0; round < 20000; round++) {
        REQUIRE(parallel(0, 3, [&](int i) {
                    sum += i + 1;
                    return 0;
                }) == 0);
    }
    CHECK(sum.load() == 20000LL * 6);
}

TEST_CASE("thread pool: loops from several user threads at once", "[runtime][pool]") {
    Threads t(3);
    // Callers on other threads share the pool or run serially; none is lost.
    std::atomic<long long> total{0};
    std::atomic<int> failures{0};
    std::vector<std::thread> callers;
    for (int c = 0; c < 4; c++)
        callers.emplace_back([&, c] {
            for (int round = 0; round < 500; round++) {
                const int r = parallel(0, 8, [&](int i) {
                    total++;
                    return c == 3 && i == 7 ? -1 : 0;  // one caller's loops fail
                });
                if (r != (c == 3 ? -1 : 0)) failures++;
            }
        });
    for (auto &c : callers) c.join();
    CHECK(total.load() == 4LL * 500 * 8);
    CHECK(failures.load() == 0);
}

TEST_CASE("thread pool: a JIT kernel's parallel loop", "[runtime][pool]") {
    using namespace kiln;
    Threads t(3);
    Func f("f");
    Var x("x"), y("y");
    f(x, y) = x + y * 1000;
    f.parallel(y);
    for (int h : {1, 2, 101}) {
        Halide::Runtime::Buffer<int32_t> out(37, h);
        out.set_min(-3, -7);
        f.realize(out);
        int wrong = 0;
        out.for_each_element([&](int x, int y) { wrong += out(x, y) != x + y * 1000; });
        CHECK(wrong == 0);
    }
}

namespace {
std::mutex message_mutex;
std::string message_seen;
int messages = 0;
void keep_message(const char *m) {
    std::lock_guard<std::mutex> lock(message_mutex);
    message_seen = m;
    messages++;
}
}  // namespace

TEST_CASE("thread pool: a failure inside a JIT kernel's parallel body", "[runtime][pool]") {
    using namespace kiln;
    Threads t(2);
    // big is allocated per row of the parallel loop over out's rows, and each
    // row's allocation is far too large.
    ImageParam in(Float(32), 2, "in");
    Param<int> stride("stride");
    Var x("x"), y("y");
    Func big("big"), out("out");
    big(x, y) = in(0, 0) + x + y;
    out(x, y) = big(x * stride, x * stride) + y;
    big.compute_at(out, y);
    out.parallel(y);
    Pipeline p(out);
    auto m = internal::JITModule::compile(p.compile_to_cpp_source("parallel_oom"), "parallel_oom", Target::host());
    Halide::Runtime::Buffer<float> input(1, 1), output(16, 16);
    input.fill(0.0f);
    output.fill(-1.0f);
    int s = 100000;
    std::vector<void *> args;
    for (const Argument &a : p.infer_arguments())
        args.push_back(a.name == "in" ? (void *)input.raw_buffer() : a.name == "stride" ? (void *)&s : (void *)output.raw_buffer());
    REQUIRE(args.size() == 3);
    for (int round = 0; round < 3; round++) {
        kiln_set_error_handler(&keep_message);
        messages = 0;
        const int r = m->run(args.data());
        kiln_set_error_handler(nullptr);
        CHECK(r == kiln_error_out_of_memory);
        CHECK(messages >= 1);
        CHECK_THAT(message_seen, Catch::Contains("parallel_oom: ") && Catch::Contains("out of memory allocating") &&
                                     Catch::Contains("for 'big'"));
    }
    // The same kernel with a small stride succeeds on the same pool.
    s = 1;
    REQUIRE(m->run(args.data()) == 0);
    CHECK(output(15, 15) == 15.0f + 15.0f + 15.0f);
}
