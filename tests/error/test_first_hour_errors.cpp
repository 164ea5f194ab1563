// Misuse a Halide user hits in the first hour (issue 14): each was a crash, a
// compiler error in the emitted C++, or a message that stopped short of the
// fix. Every message names the Func (or RDom), what is wrong and what to do.
#include <kiln/ScheduleFile.h>
#include <kiln_runtime.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "expect_error.h"

using namespace kiln;

TEST_CASE("error: realize(sizes) of an output a kernel cannot index", "[error][runtime][regression]") {
    // Was a SIGSEGV: Halide's Buffer wrote its header through the null
    // pointer malloc returned for 40 GB.
    Var x("x"), y("y");
    Func f("f");
    f(x, y) = cast<float>(x + y);
    REQUIRE_RUNTIME_ERROR(f.realize({100000, 100000}), kiln_error_out_of_memory,
                          Contains("Func f: out of memory allocating 10000000000 float32 elements (40000000000 bytes) "
                                   "for the output of realize({100000, 100000})") &&
                              Contains("a kernel writes at most 2147483647 elements of a buffer") &&
                              Contains("Realize a smaller region, or realize into a Buffer you allocate "
                                       "(f.realize(buffer))"));
    REQUIRE_COMPILE_ERROR(f.realize({4, -1}), Contains("Func f: realize({4, -1}) gives dimension 1 the negative size -1"));
    Realization small = f.realize({3, 2});
    CHECK(Buffer<float>(small[0])(2, 1) == 3.0f);
}

TEST_CASE("error: realize(sizes) whose allocation fails", "[error][runtime][regression]") {
    // 900M int64 (7.2 GB) under a 2 GB address-space limit: malloc returns
    // null. In a child process, so that the limit binds nothing else.
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        rlimit limit{2ull << 30, 2ull << 30};
        setrlimit(RLIMIT_AS, &limit);
        Var x("x"), y("y");
        Func g("g");
        g(x, y) = cast<int64_t>(x);
        try {
            g.realize({30000, 30000});
        } catch (const RuntimeError &e) {
            std::string m = e.what();
            bool ok = e.code == kiln_error_out_of_memory &&
                      m.find("Func g: out of memory allocating 900000000 int64 elements (7200000000 bytes) for the "
                             "output of realize({30000, 30000}); malloc failed") != std::string::npos;
            _exit(ok ? 0 : 1);
        } catch (...) {
        }
        _exit(2);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("error: RDom::where() with a Var the update does not loop over", "[error][definition][regression]") {
    // Was an InternalError: the emitted C++ did not compile ('z' was not
    // declared in this scope).
    Var x("x"), z("z");
    RDom r(0, 10, "r");
    r.where(r.x < z);
    Func f("f");
    f(x) = 0;
    REQUIRE_COMPILE_ERROR(f(x) += r.x, Contains("RDom r: the where() condition (r.x < z) uses Var z, which is not a "
                                                "pure Var of f.update(0) (its pure Vars: x)") &&
                                           Contains("write the condition with the RVars of r, the pure Vars of "
                                                    "f.update(0), Params and constants"));
    // The same Var in a where() added after the update: caught when lowering.
    RDom s(0, 10, "s");
    Func g("g");
    g(x) = 0;
    g(x) += s.x;
    s.where(s.x < z);
    Buffer<int> out(4);
    REQUIRE_COMPILE_ERROR(g.realize(out), Contains("RDom s: the where() condition (s.x < z), added after g.update(0) "
                                                   "was defined, uses Var z") &&
                                              Contains("call where() before defining the update"));
    // A pure Var of the update is fine: h(x) sums r.x < x.
    RDom t(0, 10, "t");
    t.where(t.x < x);
    Func h("h");
    h(x) = 0;
    h(x) += t.x;
    h.realize(out);
    CHECK(out(3) == 0 + 1 + 2);
}

TEST_CASE("error: parallel() or vectorize() of an RVar suggests rfactor() when it applies", "[error][schedule][reduction]") {
    Var x("x");
    RDom r(0, 1000, "r");
    Func f("f");
    f(x) = 0;
    f(x) += r.x * x;
    REQUIRE_COMPILE_ERROR(
        f.update(0).parallel(r.x),
        Contains("In schedule of f.update(0): parallel(r.x): r.x is a reduction variable") &&
            Contains("Parallelize or vectorize a pure Var instead (f.update(0) has x)") &&
            Contains("as f.update(0) is an associative reduction (+), rfactor() it") &&
            Contains("RVar rxo(\"rxo\"), rxi(\"rxi\"); f.update(0).split(r.x, rxo, rxi, 256); Var u(\"u\"); Func intm = "
                     "f.update(0).rfactor(rxo, u); intm.compute_root().update(0).parallel(u);"));
    REQUIRE_COMPILE_ERROR(f.update(0).vectorize(r.x),
                          Contains("f.update(0).split(r.x, rxo, rxi, 8); Var u(\"u\"); Func intm = "
                                   "f.update(0).rfactor(rxi, u); intm.compute_root().update(0).vectorize(u);"));
    // The recipe works as written.
    RVar rxo("rxo"), rxi("rxi");
    Var u("u");
    f.update(0).split(r.x, rxo, rxi, 256);
    Func intm = f.update(0).rfactor(rxo, u);
    intm.compute_root().update(0).parallel(u);
    Buffer<int> out(4);
    f.realize(out);
    CHECK(out(3) == 3 * 999 * 1000 / 2);
    // Not associative: no rfactor to offer.
    Func g("g");
    g(x) = 1;
    g(x) = g(x) * 2 + r.x;
    REQUIRE_COMPILE_ERROR(g.update(0).parallel(r.x),
                          Contains("Parallelize or vectorize a pure Var instead (g.update(0) has x)") &&
                              !Contains("rfactor"));
}

TEST_CASE("error: a call with the wrong number of arguments names the caller", "[error][definition]") {
    Var x("x"), y("y");
    RDom r(0, 4, "r");
    Func f("f"), g("g");
    g(x, y) = x + y;
    REQUIRE_COMPILE_ERROR(f(x, y) = g(x), Contains("Func g is defined with 2 argument(s) (x, y) but is called with 1 "
                                                   "in the definition of f: g(x)") &&
                                              Contains("call it with one coordinate per dimension, e.g. g(x, y)"));
    f(x, y) = g(x, y);
    REQUIRE_COMPILE_ERROR(f(x, y) += g(r.x) + 1, Contains("called with 1 in the update f.update(0): g(r.x)"));
    // A call hidden in a where() added after the update: caught when lowering.
    f(x, y) += r.x;
    r.where(g(r.x) > 0);
    Buffer<int> out(4, 4);
    REQUIRE_COMPILE_ERROR(f.realize(out), Contains("Func g has 2 dimension(s) but is called with 1 argument(s) in a "
                                                   "schedule or RDom expression of f: g(r.x)"));
}

TEST_CASE("error: a schedule file directive with a missing comma shows the corrected directive", "[error][sched]") {
    auto parse_error = [](const std::string &text) {
        try {
            ScheduleFile::parse(text, "t.sched");
        } catch (const CompileError &e) {
            return std::string(e.what());
        }
        return std::string("(no error)");
    };
    CHECK(parse_error("f: split(x xo, xi, 8)") ==
          "t.sched:1:12: expected ',' or ')' after argument 1 of split, found 'xo'; a ',' is missing: write "
          "split(x, xo, xi, 8), as in split(old, outer, inner, factor[, tail])");
    CHECK_THAT(parse_error("f: tile(x, y, xi, yi, 8 4)\n"), Contains("a ',' is missing: write tile(x, y, xi, yi, 8, 4)"));
    CHECK_THAT(parse_error("g: compute_at(f y)"), Contains("a ',' is missing: write compute_at(f, y)"));
    // No suggestion where adding the ',' would not make a valid directive.
    CHECK(parse_error("f: split(x, xo, xi, 8 x)") ==
          "t.sched:1:23: expected ',' or ')' after argument 4 of split, found 'x'");
}

TEST_CASE("error: realize() into a buffer of another element type or dimensionality", "[error][definition]") {
    // Was -4 (kiln_error_bad_type) from the kernel, after a JIT compile.
    Var x("x"), y("y");
    Func f("f");
    f(x, y) = cast<float>(x + y);
    Buffer<uint8_t> bytes(8, 8);
    REQUIRE_COMPILE_ERROR(f.realize(bytes),
                          Contains("Func f: realize() was given a uint8 buffer for f, whose values are float32; "
                                   "realize into a Buffer<float> (or let f.realize({sizes}) allocate one), or make f "
                                   "compute uint8, e.g. cast<uint8_t>(...) in its definition"));
    Buffer<float> line(8);
    REQUIRE_COMPILE_ERROR(f.realize(line), Contains("Func f: realize() was given a buffer of 1 dimension(s) for f, "
                                                    "which has 2 (x, y)"));
    Buffer<float> good(8, 8);
    f.realize(good);
    CHECK(good(7, 7) == 14.0f);
}

TEST_CASE("error: a pure definition that calls itself points to an update over an RDom", "[error][definition]") {
    Var x("x");
    Func f("f");
    REQUIRE_COMPILE_ERROR(f(x) = f(x - 1) + 1,
                          Contains("Can't call Func f because it has not been defined yet") &&
                              Contains("If f(x - 1) is in the pure definition of f itself, that definition reads the "
                                       "Func it is defining, which a pure definition cannot") &&
                              Contains("e.g. f(x) = 0; RDom r(1, 99); f(r) = f(r - 1) + 1"));
    // The suggested form works.
    RDom r(1, 99);
    f(x) = 0;
    f(r) = f(r - 1) + 1;
    Buffer<int> out(100);
    f.realize(out);
    CHECK(out(99) == 99);
}
