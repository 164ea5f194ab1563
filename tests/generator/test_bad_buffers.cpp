// Every AOT kernel rejects bad arguments on entry with the documented code
// and a message naming the kernel and the argument, and leaves its output
// untouched: null buffers, wrong element types, wrong dimensionality, inputs
// smaller than what the schedule reads, outputs smaller than what it writes,
// scalars outside their declared range.
#include "aot.h"

using namespace aot;

namespace {

const float kSentinel = -12345.0f;

// One kernel under test: its name (as in its error messages), the function
// with its scalars bound, and buffers it accepts.
struct Case {
    std::string name;
    Kernel kernel;
    int input_dims;
    bool uint8 = false;
};

// `call(in, out)` fails with `code`, reports a message containing `text`,
// and leaves `out` as it was.
template<typename T>
void expect_rejected(const Case &c, halide_buffer_t *in, Buffer<T> *out, int code, const std::string &text) {
    ErrorCapture capture;
    ErrorCapture::clear();
    Buffer<T> before;
    if (out) before = out->copy();
    int r = c.kernel(in, out ? out->raw_buffer() : nullptr);
    CHECK(r == code);
    CHECK_THAT(ErrorCapture::last(), Catch::Contains(c.name + ": ") && Catch::Contains(text));
    if (out) {
        std::string first;
        CHECK(count_mismatches(before, *out, first) == 0);
    }
}

template<typename T>
void check_bad_buffers(const Case &c, bool tiled) {
    INFO("kernel " << c.name);
    std::vector<int> shape = {300, 70, 3};
    shape.resize(c.input_dims);
    Buffer<T> in(shape), out(300, 70);
    fill_random(in, 0.0, 1.0);
    out.fill(T(kSentinel));

    expect_rejected<T>(c, nullptr, &out, kiln_error_buffer_is_null, "buffer argument 'input' is null");
    expect_rejected<T>(c, in.raw_buffer(), nullptr, kiln_error_buffer_is_null, "buffer argument 'output' is null");

    Buffer<int16_t> wrong_type(shape);
    wrong_type.fill(0);
    expect_rejected<T>(c, wrong_type.raw_buffer(), &out, kiln_error_bad_type,
                       "buffer argument 'input' has the wrong element type");
    Buffer<int16_t> wrong_out(300, 70);
    wrong_out.fill(7);
    expect_rejected<int16_t>(c, in.raw_buffer(), &wrong_out, kiln_error_bad_type,
                             "buffer argument 'output' has the wrong element type");

    std::vector<int> one_more = shape;
    one_more.push_back(2);
    Buffer<T> wrong_dims(one_more);
    wrong_dims.fill(T(0));
    expect_rejected<T>(c, wrong_dims.raw_buffer(), &out, kiln_error_bad_dimensions,
                       "buffer argument 'input' has " + std::to_string(c.input_dims + 1) + " dimensions");
    Buffer<T> flat_out(300);
    flat_out.fill(T(kSentinel));
    expect_rejected<T>(c, in.raw_buffer(), &flat_out, kiln_error_bad_dimensions,
                       "buffer argument 'output' has 1 dimensions, expected 2");

    if (tiled) {
        // Smaller than one tile: a ShiftInwards split shifts the last tile
        // outside the buffer. (The input covers where the shifted tile reads,
        // so that its own check passes; inputs are checked first.)
        std::vector<int> wide = shape;
        wide[0] += 64, wide[1] += 64;
        Buffer<T> padded(wide);
        padded.set_min(-32, -32);
        padded.fill(T(0));
        Buffer<T> tiny(4, 3);
        tiny.fill(T(kSentinel));
        expect_rejected<T>(c, padded.raw_buffer(), &tiny, kiln_error_output_too_small,
                           "output 'output' is written over");
    }
    // The call that the bad ones were variations of succeeds.
    CHECK(c.kernel(in.raw_buffer(), out.raw_buffer()) == 0);
}

template<typename F>
Kernel bind1(F f, float v) {
    return [=](halide_buffer_t *in, halide_buffer_t *out) { return f(in, v, out); };
}
template<typename F>
Kernel bind2(F f, float a, float b) {
    return [=](halide_buffer_t *in, halide_buffer_t *out) { return f(in, a, b, out); };
}

}  // namespace

TEST_CASE("generator: bad buffers are rejected and the output is untouched", "[generator]") {
    struct Entry {
        Case c;
        bool tiled;
    };
    const std::vector<Entry> float_cases = {
        {{"blur3x3_unfused", blur3x3_unfused, 2}, false},
        {{"blur3x3_fused", blur3x3_fused, 2}, false},
        {{"blur3x3_host_tiled", blur3x3_host_tiled, 2}, true},
        {{"unsharp_unfused", bind1(unsharp_unfused, 1.0f), 2}, false},
        {{"unsharp_fused", bind1(unsharp_fused, 1.0f), 2}, false},
        {{"unsharp_host_tiled", bind1(unsharp_host_tiled, 1.0f), 2}, true},
        {{"harris_unfused", bind1(harris_unfused, 0.04f), 3}, false},
        {{"harris_fused", bind1(harris_fused, 0.04f), 3}, false},
        {{"harris_host_tiled", bind1(harris_host_tiled, 0.04f), 3}, true},
        {{"softplus_unfused", bind2(softplus_unfused, 1.0f, 0.0f), 2}, false},
        {{"softplus_fused", bind2(softplus_fused, 1.0f, 0.0f), 2}, false},
        {{"softplus_host_tiled", bind2(softplus_host_tiled, 1.0f, 0.0f), 2}, true},
        {{"tanh_affine_unfused", bind2(tanh_affine_unfused, 1.0f, 0.0f), 2}, false},
        {{"tanh_affine_fused", bind2(tanh_affine_fused, 1.0f, 0.0f), 2}, false},
        {{"tanh_affine_host_tiled", bind2(tanh_affine_host_tiled, 1.0f, 0.0f), 2}, true},
    };
    for (const Entry &e : float_cases) check_bad_buffers<float>(e.c, e.tiled);
    check_bad_buffers<uint8_t>({"unsharp_u8_unfused", bind1(unsharp_u8_unfused, 1.0f), 2}, false);
    check_bad_buffers<uint8_t>({"unsharp_u8_fused", bind1(unsharp_u8_fused, 1.0f), 2}, false);
    check_bad_buffers<uint8_t>({"unsharp_u8_host_tiled", bind1(unsharp_u8_host_tiled, 1.0f), 2}, true);
}

TEST_CASE("generator: inputs smaller than the region a kernel reads", "[generator]") {
    Buffer<float> out(64, 48);
    out.fill(kSentinel);
    // elementwise_chain reads the input exactly where it writes the output.
    Buffer<float> narrow(63, 48);
    narrow.fill(0.0f);
    for (const Case &c : {Case{"softplus_unfused", bind2(softplus_unfused, 1.0f, 0.0f), 2},
                          Case{"tanh_affine_host_tiled", bind2(tanh_affine_host_tiled, 1.0f, 0.0f), 2}}) {
        expect_rejected<float>(c, narrow.raw_buffer(), &out, kiln_error_input_too_small,
                               "input 'input' is read over [0, 63] in dimension 0, but the buffer covers only [0, 62]");
    }
    // harris clamps x and y to the image, but reads channels 0, 1 and 2.
    Buffer<float> two_channels(64, 48, 2);
    two_channels.fill(0.0f);
    for (const Case &c : {Case{"harris_unfused", bind1(harris_unfused, 0.04f), 3},
                          Case{"harris_fused", bind1(harris_fused, 0.04f), 3},
                          Case{"harris_host_tiled", bind1(harris_host_tiled, 0.04f), 3}}) {
        expect_rejected<float>(c, two_channels.raw_buffer(), &out, kiln_error_input_too_small,
                               "input 'input' is read over [0, 2] in dimension 2, but the buffer covers only [0, 1]");
    }
}

TEST_CASE("generator: scalar inputs outside their declared range", "[generator]") {
    Buffer<float> in(64, 48), out(64, 48);
    in.fill(0.5f);
    out.fill(kSentinel);
    expect_rejected<float>({"unsharp_fused", bind1(unsharp_fused, 9.0f), 2}, in.raw_buffer(), &out,
                           kiln_error_param_out_of_range, "parameter 'amount' is 9");
    expect_rejected<float>({"unsharp_unfused", bind1(unsharp_unfused, -1.0f), 2}, in.raw_buffer(), &out,
                           kiln_error_param_out_of_range, "parameter 'amount' is -1");
    Buffer<float> rgb(64, 48, 3);
    rgb.fill(0.5f);
    expect_rejected<float>({"harris_host_tiled", bind1(harris_host_tiled, 0.5f), 3}, rgb.raw_buffer(), &out,
                           kiln_error_param_out_of_range, "parameter 'k' is 0.5");
}
