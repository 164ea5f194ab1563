// Bad input to a generated kernel: every bad argument is rejected on entry
// with its own kiln_error_code and a one-line message naming the kernel, the
// argument and the numbers, before anything is written to the output (a
// canary value survives). docs/reliability.md tabulates these cases.
#include <climits>
#include <cstring>

#include "bad_input.h"

using namespace rt;

namespace {

const float kCanary = -7.5f;

// in (41 x 20 floats) -> blur_x (root) -> out (40 x 19), tiles of 8 shifted
// inwards; gain in [0, 4].
struct Blur {
    ImageParam in{Float(32), 2, "in"};
    Param<float> gain{"gain"};
    Var x{"x"}, y{"y"}, xo{"xo"}, xi{"xi"};
    Func blur_x{"blur_x"}, out{"out"};
    Buffer<float> input{41, 20}, output{40, 19};
    float gain_value = 1.0f;
    std::unique_ptr<Kernel> k;

    Blur() {
        blur_x(x, y) = in(x, y) + in(x + 1, y);
        out(x, y) = (blur_x(x, y) + blur_x(x, y + 1)) * gain;
        gain.set_range(0.0f, 4.0f);
        blur_x.compute_root();
        out.split(x, xo, xi, 8, TailStrategy::ShiftInwards).vectorize(xi);
        k = std::make_unique<Kernel>(Pipeline(out), "blur_kernel");
        input.fill(1.0f);
        output.fill(kCanary);
        set_in(input.raw_buffer());
        set_out(output.raw_buffer());
        k->set("gain", &gain_value);
    }
    void set_in(halide_buffer_t *b) { k->set("in", b); }
    void set_out(halide_buffer_t *b) { k->set("out", b); }
    void rejected(int code, const std::vector<std::string> &parts) { expect_rejected(*k, code, parts, output, kCanary); }
};

}  // namespace

TEST_CASE("runtime: the good call succeeds", "[runtime]") {
    Blur b;
    std::string message;
    REQUIRE(b.k->run(message) == 0);
    CHECK(message.empty());
    CHECK(b.output(39, 18) == 4.0f);
}

TEST_CASE("runtime: a null input buffer", "[runtime]") {
    Blur b;
    b.set_in(nullptr);
    b.rejected(kiln_error_buffer_is_null, {"buffer argument 'in' is null"});
}

TEST_CASE("runtime: a null output buffer", "[runtime]") {
    Blur b;
    b.set_out(nullptr);
    std::string message;
    CHECK(b.k->run(message) == kiln_error_buffer_is_null);
    CHECK(message == "blur_kernel: buffer argument 'out' is null");
}

TEST_CASE("runtime: an input with no host memory", "[runtime]") {
    Blur b;
    halide_buffer_t no_host = *b.input.raw_buffer();
    no_host.host = nullptr;
    b.set_in(&no_host);
    b.rejected(kiln_error_host_is_null, {"buffer argument 'in' has no host memory (host is null)"});
}

TEST_CASE("runtime: an empty output computes nothing", "[runtime]") {
    // As in Halide: realizing over an empty region is not an error. An empty
    // buffer may have no host memory, and the kernel then reads no input.
    for (int empty_dim : {0, 1}) {
        Blur b;
        halide_buffer_t empty = *b.output.raw_buffer();
        halide_dimension_t dims[2] = {empty.dim[0], empty.dim[1]};
        dims[empty_dim].extent = 0;
        empty.dim = dims;
        empty.host = nullptr;
        b.set_out(&empty);
        halide_buffer_t no_input = *b.input.raw_buffer();
        no_input.host = nullptr;  // would be read if anything were computed
        halide_dimension_t in_dims[2] = {no_input.dim[0], no_input.dim[1]};
        in_dims[0].extent = 0;
        no_input.dim = in_dims;
        b.set_in(&no_input);
        std::string message;
        CHECK(b.k->run(message) == 0);
        CHECK(message.empty());
    }
}

TEST_CASE("runtime: an empty input is still too small for a non-empty output", "[runtime]") {
    Blur b;
    halide_buffer_t empty = *b.input.raw_buffer();
    halide_dimension_t dims[2] = {empty.dim[0], empty.dim[1]};
    dims[0].extent = 0;
    empty.dim = dims;
    empty.host = nullptr;
    b.set_in(&empty);
    b.rejected(kiln_error_input_too_small,
               {"input 'in' is read over [0, 40] in dimension 0, but the buffer covers only [0, -1]"});
}

TEST_CASE("runtime: an input of the wrong element type", "[runtime]") {
    Blur b;
    Buffer<int32_t> ints(41, 20);
    b.set_in(ints.raw_buffer());
    b.rejected(kiln_error_bad_type, {"buffer argument 'in' has the wrong element type: expected float32, got int32"});
}

TEST_CASE("runtime: an output of the wrong element type", "[runtime]") {
    Blur b;
    Buffer<uint8_t> bytes(40, 19);
    bytes.fill(9);
    b.set_out(bytes.raw_buffer());
    expect_rejected<uint8_t>(*b.k, kiln_error_bad_type,
                             {"buffer argument 'out' has the wrong element type: expected float32, got uint8"}, bytes, 9);
}

TEST_CASE("runtime: an input of the wrong dimensionality", "[runtime]") {
    Blur b;
    Buffer<float> line(41);
    b.set_in(line.raw_buffer());
    b.rejected(kiln_error_bad_dimensions, {"buffer argument 'in' has 1 dimensions, expected 2"});
}

TEST_CASE("runtime: an input smaller than the region the schedule reads", "[runtime]") {
    Blur b;
    Buffer<float> narrow(40, 20);  // blur_x reads column 40
    narrow.fill(1.0f);
    b.set_in(narrow.raw_buffer());
    b.rejected(kiln_error_input_too_small,
               {"input 'in' is read over [0, 40] in dimension 0, but the buffer covers only [0, 39]"});
}

TEST_CASE("runtime: an output smaller than one tile of a ShiftInwards split", "[runtime]") {
    Blur b;
    Buffer<float> padded(60, 40);  // covers what the shifted tile reads (inputs are checked first)
    padded.set_min(-10, -10);
    padded.fill(1.0f);
    b.set_in(padded.raw_buffer());
    Buffer<float> small(5, 19);
    small.fill(kCanary);
    b.set_out(small.raw_buffer());
    expect_rejected<float>(*b.k, kiln_error_output_too_small,
                           {"output 'out' is written over [-3, 4] in dimension 0, but the buffer covers only [0, 4]"},
                           small, kCanary);
}

TEST_CASE("runtime: a dimension 0 that is not dense", "[runtime]") {
    Blur b;
    Buffer<float> rows(20, 41);
    Buffer<float> transposed = rows.transposed(0, 1);
    b.set_in(transposed.raw_buffer());
    b.rejected(kiln_error_bad_stride, {"buffer argument 'in' has stride 20 in dimension 0, expected 1"});
}

TEST_CASE("runtime: a negative extent", "[runtime]") {
    Blur b;
    halide_buffer_t neg = *b.output.raw_buffer();
    halide_dimension_t dims[2] = {neg.dim[0], neg.dim[1]};
    dims[1].extent = -3;
    neg.dim = dims;
    b.set_out(&neg);
    b.rejected(kiln_error_bad_extent, {"buffer argument 'out' has negative extent -3 in dimension 1"});
}

TEST_CASE("runtime: a huge extent past the int32 coordinates", "[runtime]") {
    Blur b;
    halide_buffer_t huge = *b.input.raw_buffer();
    halide_dimension_t dims[2] = {huge.dim[0], huge.dim[1]};
    dims[0].min = INT_MAX - 10;
    dims[0].extent = 100;
    huge.dim = dims;
    b.set_in(&huge);
    b.rejected(kiln_error_bad_extent,
               {"buffer argument 'in' covers [2147483637, 2147483736] in dimension 0, past the largest coordinate"});
}

TEST_CASE("runtime: a huge buffer whose offsets overflow int32", "[runtime]") {
    Blur b;
    halide_buffer_t huge = *b.input.raw_buffer();
    halide_dimension_t dims[2] = {{0, 70000, 1, 0}, {0, 70000, 70000, 0}};
    huge.dim = dims;
    b.set_in(&huge);
    b.rejected(kiln_error_bad_extent, {"buffer argument 'in' spans 4900000000 elements, more than the 2147483647"});
}

TEST_CASE("runtime: a scalar outside its declared range", "[runtime]") {
    Blur b;
    b.gain_value = 4.5f;
    b.rejected(kiln_error_param_out_of_range, {"parameter 'gain' is 4.5, above its maximum 4"});
}

TEST_CASE("runtime: an output that overlaps the input", "[runtime]") {
    Blur b;
    // The output is a 40 x 19 window of the input's own memory.
    halide_buffer_t alias = *b.output.raw_buffer();
    halide_dimension_t dims[2] = {{0, 40, 1, 0}, {0, 19, 41, 0}};
    alias.dim = dims;
    alias.host = b.input.raw_buffer()->host;
    b.set_out(&alias);
    std::vector<float> before(b.input.data(), b.input.data() + 41 * 20);
    b.rejected(kiln_error_buffers_overlap,
               {"output 'out' overlaps input 'in' (3112 bytes shared)", "give the output its own memory"});
    CHECK(std::memcmp(before.data(), b.input.data(), before.size() * sizeof(float)) == 0);
    // Disjoint windows of one allocation are fine.
    Buffer<float> both(41, 40);
    both.fill(1.0f);
    halide_buffer_t top = *both.raw_buffer(), bottom = *both.raw_buffer();
    halide_dimension_t top_dims[2] = {{0, 41, 1, 0}, {0, 20, 41, 0}}, bottom_dims[2] = {{0, 40, 1, 0}, {0, 19, 41, 0}};
    top.dim = top_dims;
    bottom.dim = bottom_dims;
    bottom.host = (uint8_t *)(both.data() + 41 * 20);
    b.set_in(&top);
    b.set_out(&bottom);
    std::string message;
    CHECK(b.k->run(message) == 0);
    CHECK(both(0, 20) == 4.0f);
}

TEST_CASE("runtime: an intermediate too large to allocate", "[runtime]") {
    ImageParam in(Float(32), 2, "in");
    Param<int> stride("stride");
    Var x("x"), y("y");
    Func big("big"), out("out");
    big(x, y) = in(0, 0) + x + y;
    out(x, y) = big(x * stride, y * stride);  // big's region grows with stride
    big.compute_root();
    Kernel k(Pipeline(out), "sparse_kernel");
    Buffer<float> input(1, 1), output(16, 16);
    input.fill(0.0f);
    output.fill(kCanary);
    int s = 100000;  // big: 1.5M x 1.5M floats
    k.set("in", input.raw_buffer());
    k.set("stride", &s);
    k.set("out", output.raw_buffer());
    expect_rejected(k, kiln_error_out_of_memory, {"out of memory allocating 2250003000001 elements (9000012000004 bytes) for 'big'"}, output, kCanary);
}

TEST_CASE("runtime: a bound() smaller than what the consumers read", "[runtime]") {
    Var x("x");
    Param<int> offset("offset");
    Func f("f"), g("g");
    f(x) = x;
    g(x) = f(x + offset);
    f.compute_root().bound(x, 0, 32);
    Kernel k(Pipeline(g), "bounded_kernel");
    Buffer<int> output(16);
    output.fill(-1);
    int off = 20;  // g reads f over [20, 35]
    k.set("offset", &off);
    k.set("g", output.raw_buffer());
    expect_rejected(k, kiln_error_bound_too_small,
                    {"Func f is given bound(x, 0, 32), which covers [0, 31], but its consumers read it over [20, 35]"},
                    output, -1);
    off = 16;
    std::string message;
    CHECK(k.run(message) == 0);
    CHECK(output(15) == 31);
}
