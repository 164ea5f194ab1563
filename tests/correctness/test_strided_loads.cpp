// Vectorized reads at f(S * x) (strided) and f(x / D) (each element
// repeated D times), which the host code generator turns into dense loads
// and shuffles instead of per-lane gathers. The inputs end (and start) at a
// page that faults when touched, so a load that read one element past what
// the lanes need would crash the test; values are checked against plain
// references for strides and divisors 2 to 4 (x / 3 stays a gather),
// several element types, lane counts and output mins (negative ones
// exercise the floor of x / D).
#include "check.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

using namespace kiln;

namespace {

// A w x h buffer of T whose first element follows a faulting page and
// whose last element precedes one.
template<typename T>
struct GuardedImage {
    char *mem = nullptr;
    size_t total = 0;
    Buffer<T> buf;
    GuardedImage(int w, int h, int min_x) {
        const size_t page = (size_t)sysconf(_SC_PAGESIZE), bytes = sizeof(T) * (size_t)w * h;
        const size_t data_pages = (bytes + page - 1) / page;
        total = (data_pages + 2) * page;
        mem = (char *)mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        REQUIRE(mem != MAP_FAILED);
        REQUIRE(mprotect(mem, page, PROT_NONE) == 0);
        REQUIRE(mprotect(mem + (data_pages + 1) * page, page, PROT_NONE) == 0);
        // Flush against the upper guard; the lower one is below the start.
        T *data = (T *)(mem + (data_pages + 1) * page) - (size_t)w * h;
        buf = Buffer<T>(data, w, h);
        buf.set_min(min_x, 0);
        for (int y = 0; y < h; y++)
            for (int x = min_x; x < min_x + w; x++) buf(x, y) = (T)kt::noise(x, y, 0, 100);
    }
    ~GuardedImage() { munmap(mem, total); }
};

// The body of f's emitted C++ for t (after the prologue, whose helpers
// name every kind of load), to check which loads it uses.
std::string source_of(Func f, const Target &t = Target::host()) {
    std::string src = Pipeline(f).compile_to_cpp_source("k", t);
    size_t body = src.find("// produce ");
    REQUIRE(body != std::string::npos);
    return src.substr(body);
}

template<typename T>
void check_strided(int lanes) {
    for (int s = 2; s <= 4; s++) {
        const int w = 37, h = 3;  // output width: not a multiple of the lanes
        GuardedImage<T> im(s * (w - 1) + 1, h, 0);  // exactly the elements read
        ImageParam in(type_of<T>(), 2, "in");
        in.set(im.buf);
        Var x("x"), y("y");
        Func f("f");
        f(x, y) = in(s * x, y) + cast<T>(1);
        f.vectorize(x, lanes);
        INFO("stride " << s << ", " << lanes << " lanes of " << sizeof(T) << "-byte elements");
        std::string src = source_of(f);
        CHECK(src.find("kiln_load_stride<") != std::string::npos);
        CHECK(src.find("kiln_gather<") == std::string::npos);
        kt::realize_and_check<T>(f, {{w, h, 0, 0}}, [&](int px, int py) { return (T)(im.buf(s * px, py) + 1); });
    }
}

template<typename T>
void check_repeated(int lanes) {
    for (int d = 2; d <= 4; d++) {
        for (int out_min : {0, -5, 3}) {
            const int w = 45, h = 2;
            // x / d over [out_min, out_min + w - 1] (floor division).
            const int lo = (int)kt::div_euclid(out_min, d), hi = (int)kt::div_euclid(out_min + w - 1, d);
            GuardedImage<T> im(hi - lo + 1, h, lo);
            ImageParam in(type_of<T>(), 2, "in");
            in.set(im.buf);
            Var x("x"), y("y");
            Func f("f");
            f(x, y) = in(x / d, y) * cast<T>(2);
            f.vectorize(x, lanes);
            INFO("divisor " << d << ", " << lanes << " lanes, output min " << out_min);
            // Powers of two up to half the lanes: dense loads; others gather.
            const bool dense = (d & (d - 1)) == 0 && 2 * d <= lanes;
            std::string src = source_of(f);
            CHECK((src.find("kiln_load_repeat<") != std::string::npos) == dense);
            CHECK((src.find("kiln_gather<") == std::string::npos) == dense);
            kt::realize_and_check<T>(f, {{w, h, out_min, 0}},
                                     [&](int px, int py) { return (T)(im.buf((int)kt::div_euclid(px, d), py) * 2); });
        }
    }
}

}  // namespace

TEST_CASE("strided loads: f(s * x) under vectorize reads whole vectors, never past the input", "[vectorize][loads]") {
    check_strided<float>(8);
    check_strided<float>(16);
    check_strided<int16_t>(16);
    check_strided<uint8_t>(32);
}

TEST_CASE("repeated lanes: f(x / d) under vectorize reads whole vectors, never past the input", "[vectorize][loads]") {
    check_repeated<float>(8);
    check_repeated<int32_t>(4);  // 4 lanes: only x / 2 is dense
    check_repeated<uint16_t>(16);
}

TEST_CASE("repeated lanes: a demosaic's select between two half-resolution images", "[vectorize][loads]") {
    // out(x) = even x: a(x / 2); odd x: b(x / 2), as a Bayer demosaic
    // interleaves its half-resolution channels: each parity's lanes are
    // computed as one half-width vector of dense loads of its own side,
    // then interleaved (dsl/lower/InterleaveSelects.h). Odd and negative
    // output mins start the vectors on odd x; 64 lanes are wider than a
    // register.
    for (int lanes : {16, 64}) {
        for (int out_min : {0, 3, -5}) {
            const int w = 2 * lanes + 13, h = 4;
            const int lo = (int)kt::div_euclid(out_min, 2), hi = (int)kt::div_euclid(out_min + w - 1, 2);
            GuardedImage<uint16_t> a(hi - lo + 1, h, lo), b(hi - lo + 1, h, lo);
            ImageParam ia(UInt(16), 2, "a"), ib(UInt(16), 2, "b");
            ia.set(a.buf);
            ib.set(b.buf);
            Var x("x"), y("y");
            Func out("out");
            out(x, y) = select(x % 2 == 0, ia(x / 2, y), ib(x / 2, y) + cast<uint16_t>(1000));
            out.vectorize(x, lanes);
            INFO(lanes << " lanes, output min " << out_min);
            std::string src = source_of(out);
            CHECK(src.find("kiln_interleave<") != std::string::npos);
            CHECK(src.find("kiln_load_repeat<") == std::string::npos);
            CHECK(src.find("kiln_gather<") == std::string::npos);
            kt::realize_and_check<uint16_t>(out, {{w, h, out_min, 0}}, [&](int px, int py) {
                int q = (int)kt::div_euclid(px, 2);
                return px % 2 == 0 ? a.buf(q, py) : (uint16_t)(b.buf(q, py) + 1000);
            });
        }
    }
}

namespace {

// The whole-vector moves of the compiled kernel (`c++ -S` of its emitted
// C++ with the kernels' flags) that reload part of a vector from the stack:
// from the stack into a register narrower than the target's widest (ymm or
// xmm with AVX-512, xmm with AVX2).
int partial_vector_reloads(const std::string &cpp) {
    const int register_bytes = Target::host().natural_vector_size(UInt(8));
    std::vector<std::string> narrow;
    if (register_bytes > 16) narrow.push_back("%xmm");
    if (register_bytes > 32) narrow.push_back("%ymm");
    char dir_templ[] = "/tmp/kiln-test-asm-XXXXXX";
    REQUIRE(mkdtemp(dir_templ));
    const std::string dir = dir_templ, src = dir + "/k.cpp", asm_path = dir + "/k.s";
    {
        FILE *f = std::fopen(src.c_str(), "w");
        REQUIRE(f);
        std::fputs(cpp.c_str(), f);
        std::fclose(f);
    }
    const std::string cmd = "c++ -std=c++17 -I" KILN_HALIDE_INCLUDE_DIR " " + kernel_compiler_flags(Target::host()) +
                            " -S -o " + asm_path + " " + src + " 2>&1";
    REQUIRE(std::system(cmd.c_str()) == 0);
    int reloads = 0;
    std::ifstream in(asm_path);
    for (std::string line; std::getline(in, line);) {
        std::istringstream words(line);
        std::string op, operands;
        words >> op >> operands;
        const bool vector_move = op.rfind("vmovdq", 0) == 0 || op.rfind("vmovap", 0) == 0 || op.rfind("vmovup", 0) == 0;
        const size_t comma = operands.rfind(',');
        if (!vector_move || comma == std::string::npos) continue;
        const std::string from = operands.substr(0, comma), to = operands.substr(comma + 1);
        const bool from_stack = from.find("(%rsp)") != std::string::npos || from.find("(%rbp)") != std::string::npos;
        for (const std::string &r : narrow) reloads += from_stack && to.rfind(r, 0) == 0;
    }
    std::filesystem::remove_all(dir);
    return reloads;
}

}  // namespace

TEST_CASE("repeated lanes: an interleave two registers wide stays in registers", "[vectorize][loads][codegen]") {
    // The demosaic's select on the parity of x, two vector registers of
    // lanes, the output's min known only at run time (each side a select
    // on its parity): kiln_interleave shuffles the whole operands into each
    // register of the result. Taking the operands' halves first stored them
    // on the stack and reloaded them a half at a time (8 such reloads
    // here with AVX-512); in camera_pipe's demosaic the reloads alone took
    // a tenth of its samples.
    const int lanes = 2 * Target::host().natural_vector_size(UInt(16));
    ImageParam ia(UInt(16), 2, "a"), ib(UInt(16), 2, "b");
    Var x("x"), y("y");
    Func out("out");
    out(x, y) = select(x % 2 == 0, ia(x / 2, y), ib(x / 2, y) + cast<uint16_t>(1000));
    out.vectorize(x, lanes, TailStrategy::RoundUp);
    const std::string src = Pipeline(out).compile_to_cpp_source("k");
    CHECK(src.find("kiln_interleave<") != std::string::npos);
    CHECK(partial_vector_reloads(src) == 0);
}

TEST_CASE("repeated lanes: a Bayer demosaic's selects on the parity of x and of y", "[vectorize][loads]") {
    // Four half-resolution channels, one per site of a 2 x 2 tile, the
    // sides computed from neighbours at x / 2 - 1 and x / 2 + 1 as well.
    const int w = 70, h = 6, out_min = 1;
    GuardedImage<uint16_t> im(w / 2 + 3, h / 2 + 1, -1);
    ImageParam in(UInt(16), 2, "in");
    in.set(im.buf);
    Var x("x"), y("y");
    Func avg("avg"), out("out");
    avg(x, y) = cast<uint16_t>((cast<uint32_t>(in(x - 1, y)) + in(x + 1, y) + 1) / 2);
    Expr even_row = select(x % 2 == 0, in(x / 2, y / 2), avg(x / 2, y / 2));
    Expr odd_row = select(x % 2 == 0, avg(x / 2, y / 2) + cast<uint16_t>(7), in(x / 2, y / 2) * cast<uint16_t>(3));
    out(x, y) = select(y % 2 == 0, even_row, odd_row);
    out.vectorize(x, 32);
    CHECK(source_of(out).find("kiln_interleave<") != std::string::npos);
    kt::realize_and_check<uint16_t>(out, {{w, h, out_min, 0}}, [&](int px, int py) {
        int qx = (int)kt::div_euclid(px, 2), qy = py / 2;
        uint16_t v = im.buf(qx, qy), m = (uint16_t)(((uint32_t)im.buf(qx - 1, qy) + im.buf(qx + 1, qy) + 1) / 2);
        if (py % 2 == 0) return px % 2 == 0 ? v : m;
        return px % 2 == 0 ? (uint16_t)(m + 7) : (uint16_t)(v * 3);
    });
}

TEST_CASE("strided loads: a stride beyond 4, or padded lanes, stay gathers", "[vectorize][loads]") {
    ImageParam in(Float(32), 1, "in");
    Var x("x");
    Func f("f"), g("g");
    f(x) = in(5 * x);
    f.vectorize(x, 8);
    CHECK(source_of(f).find("kiln_gather<") != std::string::npos);
    g(x) = in(2 * x);
    g.vectorize(x, 3);
    CHECK(source_of(g).find("kiln_gather<") != std::string::npos);
    Buffer<float> im(5 * 20), out(20);
    for (int i = 0; i < 5 * 20; i++) im(i) = i * 0.5f;
    in.set(im);
    f.realize(out);
    kt::check(out, [&](int px) { return im(5 * px); });
}

// A gather one register wide is filled as 16-byte pieces joined by
// shuffles, one two registers wide as two such registers; wider or
// partial ones, and targets without SSE4.1, lane by lane
// (runtime/kiln_prologue.h).
// Every element type at half, one and two registers' width, on the host
// and the narrower instruction sets, reads what the table holds.
template<typename T>
void check_gathers(const Target &t) {
    const int n = 203, entries = 97;
    Buffer<T> table(entries);
    Buffer<int32_t> index(n);
    for (int i = 0; i < entries; i++) table(i) = (T)(i * 37 % 251 + 1);
    for (int i = 0; i < n; i++) index(i) = (i * 41 + 11) % entries;
    const int natural = t.natural_vector_size(type_of<T>());
    for (int lanes : {natural / 2, natural, 2 * natural}) {
        if (lanes < 2 || lanes > 64) continue;  // 64 lanes at most
        ImageParam tab(type_of<T>(), 1, "tab"), idx(Int(32), 1, "idx");
        Var x("x");
        Func f("f");
        f(x) = tab(clamp(idx(x), 0, entries - 1));
        f.vectorize(x, lanes);
        tab.set(table);
        idx.set(index);
        INFO("target " << t.to_string() << ", " << sizeof(T) * 8 << "-bit lanes (float: " << std::is_floating_point<T>::value << ") x " << lanes);
        CHECK(source_of(f, t).find("kiln_gather<") != std::string::npos);
        Buffer<T> out(n);
        f.realize(out, t);
        int wrong = 0;
        for (int i = 0; i < n; i++) wrong += out(i) != table(index(i));
        CHECK(wrong == 0);
    }
}

TEST_CASE("gathers: every element type at half, one and two registers' width", "[vectorize][loads]") {
    std::vector<Target> targets = kt::narrower_targets();
    targets.insert(targets.begin(), Target::host());
    for (const Target &t : targets) {
        check_gathers<uint8_t>(t);
        check_gathers<uint16_t>(t);
        check_gathers<int32_t>(t);
        check_gathers<float>(t);
        check_gathers<double>(t);
    }
}

TEST_CASE("table lookups: 64 lanes read from a byte table on the stack with shuffles", "[vectorize][loads]") {
    // A tone curve of 1024 entries (camera_pipe's curve) and one of 256,
    // computed into stack arrays, read at clamped 16-bit values: whole
    // 128-byte blocks become kiln_lookup; a table of 1000 bytes stays a
    // gather. The output width is not a multiple of the lanes.
    for (int entries : {1024, 256, 1000}) {
        const int w = 203;
        Buffer<uint16_t> im(w);
        for (int x = 0; x < w; x++) im(x) = (uint16_t)kt::noise(x, 0, 0, 1100);
        ImageParam in(UInt(16), 1, "in");
        in.set(im);
        Var x("x"), i("i");
        Func curve("curve"), out("out");
        curve(i) = cast<uint8_t>(i * 37 + i / 5);
        curve.compute_root();
        out(x) = curve(clamp(cast<int32_t>(in(x)), 0, entries - 1));
        out.vectorize(x, 64);
        INFO(entries << " entries");
        std::string src = source_of(out);
        const bool table = entries % 128 == 0;
        CHECK((src.find("kiln_lookup<uint8x64, " + std::to_string(entries) + ">(") != std::string::npos) == table);
        CHECK((src.find("kiln_gather<uint8x64>(") != std::string::npos) == !table);
        Buffer<uint8_t> o(w);
        out.realize(o);
        kt::check(o, [&](int px) {
            int v = std::min<int>(im(px), entries - 1);
            return (uint8_t)(v * 37 + v / 5);
        });
    }
}

TEST_CASE("table lookups: a 16- or 8-bit index is not widened to 32 bits first", "[vectorize][loads]") {
    // camera_pipe's curve(clamp(corrected, 0, 1023)), corrected int16: the
    // lookup takes the clamped int16 lanes as they are (no int32x64 in the
    // kernel); likewise a uint8 value indexing a 256-byte table.
    const int w = 203;
    Buffer<int16_t> im(w);
    Buffer<uint8_t> bytes(w);
    for (int x = 0; x < w; x++) {
        im(x) = (int16_t)kt::noise(x, 1, -200, 1200);
        bytes(x) = (uint8_t)kt::noise(x, 2, 0, 255);
    }
    ImageParam in(Int(16), 1, "in"), in8(UInt(8), 1, "in8");
    in.set(im);
    in8.set(bytes);
    Var x("x"), i("i");
    Func curve("curve"), out("out"), out8("out8");
    curve(i) = cast<uint8_t>(i * 37 + i / 5);
    curve.compute_root();
    out(x) = curve(clamp(in(x), cast<int16_t>(0), cast<int16_t>(1023)));
    out8(x) = curve(in8(x)) + curve(cast<uint8_t>(in8(x) + 1));
    out.vectorize(x, 64);
    out8.vectorize(x, 64);
    for (Func f : {out, out8}) {
        INFO(f.name());
        std::string src = source_of(f);
        CHECK(src.find("kiln_lookup<uint8x64, ") != std::string::npos);
        CHECK(src.find("int32x64") == std::string::npos);
    }
    Buffer<uint8_t> o(w), o8(w);
    out.realize(o);
    out8.realize(o8);
    auto c = [](int v) { return (uint8_t)(v * 37 + v / 5); };
    kt::check(o, [&](int px) { return c(std::min(std::max((int)im(px), 0), 1023)); });
    kt::check(o8, [&](int px) { return (uint8_t)(c(bytes(px)) + c((uint8_t)(bytes(px) + 1))); });
}
