// The Generator API: the registry, GeneratorParams set from text, the
// signature in declaration order, the checks on generate(), and the
// explicit-signature compilation kiln-gen relies on. The generators of
// generators/ are linked into this test (kiln_generators).
#include <kiln/Generator.h>
#include <kiln/kiln.h>
#include <nlohmann/json.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

using namespace kiln;
using Catch::Contains;

namespace {

// The text of a file (REQUIRE: it exists).
std::string read_file(const std::string &path) {
    std::ifstream f(path);
    REQUIRE(f.good());
    return std::string(std::istreambuf_iterator<char>(f), {});
}

// A CompileError whose message satisfies `m`.
template<typename M>
void require_compile_error(const std::function<void()> &f, const M &m) {
    try {
        f();
        FAIL("no CompileError was thrown");
    } catch (const CompileError &e) {
        CHECK_THAT(std::string(e.what()), m);
    }
}

std::vector<std::string> names(const std::vector<Argument> &args) {
    std::vector<std::string> r;
    for (const Argument &a : args) r.push_back(a.name);
    return r;
}

// A generator of this test: every kind of GeneratorParam and an output
// whose definition can be made wrong on purpose.
class Probe : public Generator<Probe> {
public:
    enum class Mode { Good, WrongType, WrongDims, Undefined };
    GeneratorParam<Mode> mode{"mode", Mode::Good,
                              {{"good", Mode::Good},
                               {"wrong_type", Mode::WrongType},
                               {"wrong_dims", Mode::WrongDims},
                               {"undefined", Mode::Undefined}}};
    GeneratorParam<int> radius{"radius", 1, 0, 4};
    GeneratorParam<float> gain{"gain", 1.5f};
    GeneratorParam<bool> flip{"flip", false};
    GeneratorParam<uint8_t> level{"level", 3};
    Input<float> offset{"offset", 0.0f};
    Input<Buffer<int16_t, 2>> input{"input"};
    Input<Buffer<float, 1>> unused{"unused"};
    Output<Buffer<float, 2>> output{"output"};

    void generate() {
        Var x("x"), y("y");
        Expr v = cast<float>(input(x, y)) * gain.value() + offset;
        switch (mode.value()) {
        case Mode::Good: output(x, y) = flip.value() ? -v : v; break;
        case Mode::WrongType: output(x, y) = cast<int>(v); break;
        case Mode::WrongDims: output(x) = cast<float>(x); break;
        case Mode::Undefined: break;
        }
    }
};

// A generator that gives its buffers' sizes (set_estimates()), rightly or
// in one of the wrong ways.
class Estimated : public Generator<Estimated> {
public:
    enum class Mode { Good, WrongDims, NotConstant, Scalar };
    GeneratorParam<Mode> mode{"mode", Mode::Good,
                              {{"good", Mode::Good},
                               {"wrong_dims", Mode::WrongDims},
                               {"not_constant", Mode::NotConstant},
                               {"scalar", Mode::Scalar}}};
    Input<float> gain{"gain", 2.0f};
    Input<Buffer<float, 2>> input{"input"};
    Output<Buffer<float, 2>> output{"output"};

    void generate() {
        Var x("x"), y("y");
        Func blur("blur");
        blur(x, y) = input(x, y) + input(x + 1, y) + input(x, y + 1);
        output(x, y) = blur(x, y) * gain;
        input.set_estimates({{0, 301}, {0, 201}});
        switch (mode.value()) {
        case Mode::Good: output.set_estimates({{0, 300}, {0, 200}}); break;
        case Mode::WrongDims: output.set_estimates({{0, 300}}); break;
        case Mode::NotConstant: output.set_estimates({{0, input.width() - 1}, {0, 200}}); break;
        case Mode::Scalar: gain.set_estimates({}); break;
        }
    }
};

}  // namespace

KILN_REGISTER_GENERATOR(Probe, probe)
KILN_REGISTER_GENERATOR(Estimated, estimated)

TEST_CASE("generator api: a generator's own estimates size -s auto and the reports without --estimate",
          "[generator][autoschedule][estimates]") {
    GeneratorCompileOptions o;
    o.output_dir = "generator_api_out";
    o.function_name = "api_estimated";
    o.schedule_file = "auto";
    o.emit = {"schedule", "report"};
    compile_generator(*GeneratorRegistry::create("estimated"), o);
    CHECK_THAT(read_file("generator_api_out/api_estimated.sched"),
               Contains("Chosen by kiln::autoschedule for input 301x201, output 300x200;"));
    CHECK_THAT(read_file("generator_api_out/api_estimated.report.txt"), Contains("300x200"));
    // --estimate wins, and the generator's are not mixed in.
    o.estimates["output"] = {64, 32};
    compile_generator(*GeneratorRegistry::create("estimated"), o);
    const std::string sched = read_file("generator_api_out/api_estimated.sched");
    CHECK_THAT(sched, Contains("Chosen by kiln::autoschedule for output 64x32;") && !Contains("301x201"));

    o.estimates.clear();
    auto wrong = [&](const char *mode) -> std::function<void()> {
        std::shared_ptr<GeneratorBase> g = GeneratorRegistry::create("estimated");
        g->set_generator_param("mode", mode);
        return [g, &o] { compile_generator(*g, o); };
    };
    require_compile_error(wrong("wrong_dims"), Contains("Output 'output': set_estimates() got 1 dimension(s) for a "
                                                        "2-D buffer; give {min, extent} for each dimension"));
    require_compile_error(wrong("not_constant"), Contains("Output 'output': set_estimates(): the extent of dimension 0 "
                                                          "is ") &&
                                                     Contains(", not a positive integer constant"));
    require_compile_error(wrong("scalar"), Contains("Input 'gain': set_estimates() gives a buffer's size; a scalar "
                                                    "has none"));
}

TEST_CASE("generator api: the registry lists and creates generators", "[generator]") {
    std::vector<std::string> list = GeneratorRegistry::list();
    for (const char *g : {"blur3x3", "elementwise_chain", "harris", "probe", "unsharp"})
        CHECK(std::find(list.begin(), list.end(), g) != list.end());
    CHECK(std::is_sorted(list.begin(), list.end()));
    auto g = GeneratorRegistry::create("blur3x3");
    CHECK(g->name() == "blur3x3");
    std::string all;  // every registered name, sorted, comma-separated
    for (const auto &name : list) all += (all.empty() ? "" : ", ") + name;
    CHECK_THAT(all, Contains("blur3x3, ") && Contains("elementwise_chain, ") && Contains("harris, ") && Contains("probe, "));
    require_compile_error([] { GeneratorRegistry::create("blur5x5"); },
                          Contains("Unknown generator \"blur5x5\"; the generators linked into this program are: " +
                                   all));
    require_compile_error([] { GeneratorRegistry::register_factory("blur3x3", nullptr); },
                          Contains("Two generators are registered as \"blur3x3\""));
}

TEST_CASE("generator api: the signature is the inputs in declaration order, then the outputs", "[generator]") {
    auto chain = GeneratorRegistry::create("elementwise_chain");
    CHECK(names(chain->arguments()) == std::vector<std::string>{"input", "a", "b", "output"});
    auto probe = GeneratorRegistry::create("probe");
    std::vector<Argument> args = probe->arguments();
    REQUIRE(names(args) == std::vector<std::string>{"offset", "input", "unused", "output"});
    CHECK(!args[0].is_buffer);
    CHECK(args[0].type == Float(32));
    CHECK(args[1].is_buffer);
    CHECK(args[1].type == Int(16));
    CHECK(args[1].dimensions == 2);
    CHECK(args[2].dimensions == 1);
    // Inferred arguments are sorted by name and leave out what is not read.
    Pipeline p = probe->build_pipeline();
    CHECK(names(p.infer_arguments()) == std::vector<std::string>{"input", "offset", "output"});
    std::string src = p.compile_to_cpp_source("probe_fn", args, Target("host"));
    CHECK_THAT(src, Contains("extern \"C\" int probe_fn(float offset, halide_buffer_t *input_buffer, "
                             "halide_buffer_t *unused_buffer, halide_buffer_t *output_buffer)"));
}

TEST_CASE("generator api: GeneratorParams from text", "[generator]") {
    auto g = GeneratorRegistry::create("probe");
    g->set_generator_params({"radius=4", "gain=0.25", "flip=true", "level=200", "mode=good"});
    std::map<std::string, std::string> values;
    for (const GeneratorParamBase *p : g->params()) values[p->name()] = p->value_string();
    CHECK(values == std::map<std::string, std::string>{
                        {"mode", "good"}, {"radius", "4"}, {"gain", "0.25"}, {"flip", "true"}, {"level", "200"}});
    CHECK_THAT(g->describe(), Contains("param   radius = 4  (an integer in [0, 4])") &&
                                  Contains("param   mode = good  (one of good, undefined, wrong_dims, wrong_type)") &&
                                  Contains("input   unused: float32 buffer, 1-D") &&
                                  Contains("input   offset: float32 scalar, default 0"));

    require_compile_error([&] { g->set_generator_param("radius", "5"); },
                          Contains("generator probe: GeneratorParam 'radius' cannot be \"5\"; it is an integer in [0, 4]"));
    require_compile_error([&] { g->set_generator_param("radius", "2x"); }, Contains("it is an integer in [0, 4]"));
    require_compile_error([&] { g->set_generator_param("level", "256"); },
                          Contains("cannot be \"256\"; it is an integer of type uint8"));
    require_compile_error([&] { g->set_generator_param("flip", "yes"); }, Contains("it is true or false"));
    require_compile_error([&] { g->set_generator_param("gain", ""); }, Contains("it is a number"));
    require_compile_error([&] { g->set_generator_param("mode", "bad"); },
                          Contains("it is one of good, undefined, wrong_dims, wrong_type"));
    require_compile_error([&] { g->set_generator_param("radiu", "1"); },
                          Contains("generator probe has no GeneratorParam 'radiu'; its GeneratorParams are: mode (") &&
                              Contains("radius (an integer in [0, 4])"));
    require_compile_error([&] { g->set_generator_params({"radius"}); },
                          Contains("\"radius\" is not a GeneratorParam setting; write name=value"));

    auto unsharp = GeneratorRegistry::create("unsharp");
    require_compile_error([&] { unsharp->set_generator_param("type", "float8"); },
                          Contains("it is a type: one of bool, int8, int16, int32, int64, uint8") &&
                              Contains("float16, bfloat16, float32, float64"));
    unsharp->set_generator_param("type", "bfloat16");
    CHECK(unsharp->arguments()[0].type == BFloat(16));
    unsharp->set_generator_param("type", "uint16");
    CHECK(unsharp->arguments()[0].type == UInt(16));
    CHECK(unsharp->arguments()[2].type == UInt(16));
    unsharp->build_pipeline();
    require_compile_error([&] { unsharp->set_generator_param("type", "uint8"); },
                          Contains("GeneratorParam 'type' is set after generate() ran"));
}

TEST_CASE("generator api: outputs must be defined as declared", "[generator]") {
    for (const auto &[mode, message] : std::vector<std::pair<std::string, std::string>>{
             {"wrong_type", "generator probe: Output 'output' is declared float32 but generate() defines it as int32; "
                            "cast the value"},
             {"wrong_dims", "generator probe: Output 'output' is declared with 2 dimension(s) but generate() defines "
                            "it over 1"},
             {"undefined", "generator probe: Output 'output' is not defined by generate(); define it there"}}) {
        auto g = GeneratorRegistry::create("probe");
        g->set_generator_param("mode", mode);
        require_compile_error([&] { g->build_pipeline(); }, Contains(message));
    }
    auto g = GeneratorRegistry::create("probe");
    Pipeline p1 = g->build_pipeline(), p2 = g->build_pipeline();  // generate() runs once
    CHECK(p1.outputs()[0].contents() == p2.outputs()[0].contents());
}

TEST_CASE("generator api: several outputs, and a generator made without the registry", "[generator]") {
    struct SumDiff : Generator<SumDiff> {
        Input<Buffer<float, 1>> a{"a"};
        Input<Buffer<float, 1>> b{"b"};
        Output<Buffer<float, 1>> sum{"sum"};
        Output<Buffer<float>> diff{"diff", 1};
        void generate() {
            Var x("x");
            sum(x) = a(x) + b(x);
            diff(x) = a(x) - b(x);
        }
    };
    SumDiff g;
    CHECK(g.name().empty());
    CHECK(names(g.arguments()) == std::vector<std::string>{"a", "b", "sum", "diff"});
    Pipeline p = g.build_pipeline();
    REQUIRE(p.outputs().size() == 2);
    CHECK_THAT(p.compile_to_cpp_source("sum_diff", g.arguments(), Target("host")),
               Contains("extern \"C\" int sum_diff(halide_buffer_t *a_buffer, halide_buffer_t *b_buffer, "
                        "halide_buffer_t *sum_buffer, halide_buffer_t *diff_buffer)"));
    CHECK_THAT(g.describe(), Contains("(unregistered generator)") && Contains("output  diff: float32 buffer, 1-D"));
}

TEST_CASE("generator api: anonymous Funcs get the same names in every build, so a .sched can name them",
          "[generator][names]") {
    // A helper that makes Funcs without names, as Halide's apps do (a
    // demosaic's interleave), and an inline reduction (named "sum", "sum_1").
    struct Anonymous : Generator<Anonymous> {
        Input<Buffer<float, 2>> in{"in"};
        Output<Buffer<float, 2>> out{"out"};
        static Func twice(Func g) {
            Var x("x"), y("y");
            Func f;
            f(x, y) = g(x, y) * 2.0f;
            return f;
        }
        void generate() {
            Var x("x"), y("y");
            RDom r(0, 3, "r");
            Func a = twice(in), b = twice(a);
            out(x, y) = b(x, y) + sum(in(x + r, y)) + sum(a(x, y + r));
        }
    };
    auto func_names = [](const Pipeline &p) {
        std::vector<std::string> n;
        for (const auto &[name, f] : p.functions()) n.push_back(name);
        return n;
    };
    Func before;  // made outside a build: the process-wide count goes on
    Anonymous g1, g2;
    Pipeline p1 = g1.build_pipeline();
    Func between;
    Pipeline p2 = g2.build_pipeline();
    CHECK(func_names(p1) == func_names(p2));
    CHECK(func_names(p1) == std::vector<std::string>{"f0", "f1", "in_im", "out", "sum", "sum_1"});
    CHECK(before.name() != between.name());
    // A schedule naming them applies to either build.
    for (Pipeline *p : {&p1, &p2})
        CHECK_NOTHROW(ScheduleFile::parse("f0: compute_root()\nsum_1: compute_at(out, y)\n", "anonymous.sched")
                          .apply(*p, Target("host")));
}

TEST_CASE("generator api: an Output set from an adjoint, with the output's adjoint an Input", "[generator][grad]") {
    // d_input = d (sum of d_output * 2 * in^2) / d in = 4 * in * d_output, over d_output's region.
    enum class Mode { Good, Twice, Undefined };
    struct SquareGrad : Generator<SquareGrad> {
        Mode mode = Mode::Good;
        Input<Buffer<float, 1>> in{"in"};
        Input<Buffer<float, 1>> d_output{"d_output"};
        Output<Buffer<float, 1>> d_in{"d_in"};
        void generate() {
            Var x("x");
            Func square("square");
            square(x) = 2.0f * in(x) * in(x);
            Derivative d = propagate_adjoints(square, d_output);  // an Input as the output's adjoint
            if (mode == Mode::Twice) d_in(x) = 0.0f;
            if (mode == Mode::Undefined) d_in.set(Func("nothing"));
            else d_in.set(d(in));  // d(Input) rather than d(in.param())
        }
    };
    SquareGrad g;
    CHECK(names(g.arguments()) == std::vector<std::string>{"in", "d_output", "d_in"});
    Pipeline p = g.build_pipeline();
    CHECK(p.functions().count("in_adjoint") == 1);
    CHECK(p.outputs()[0].args()[0].name() == "x");  // the adjoint's Var names, for schedule files
    Buffer<float> in(7), d_out(5), d_in(7);
    in.for_each_element([&](int x) { in(x) = 0.5f * x - 1; });
    d_out.set_min(1);
    d_out.for_each_element([&](int x) { d_out(x) = 1.0f + x; });
    ImageParam(g.in).set(in);
    ImageParam(g.d_output).set(d_out);
    p.realize(d_in);
    for (int x = 0; x < 7; x++) CHECK(d_in(x) == (x >= 1 && x <= 5 ? 4 * in(x) * d_out(x) : 0.0f));

    SquareGrad twice;
    twice.mode = Mode::Twice;
    require_compile_error([&] { twice.build_pipeline(); },
                          Contains("Output 'd_in' is defined twice: set(in_adjoint) after an earlier definition; "
                                   "define each Output once in generate()"));
    SquareGrad undefined;
    undefined.mode = Mode::Undefined;
    require_compile_error([&] { undefined.build_pipeline(); },
                          Contains("Output 'd_in': set() was given Func nothing, which has no definition; pass a "
                                   "defined Func, e.g. an adjoint d(input)"));
}

TEST_CASE("generator api: a Tuple output is one buffer per element", "[generator][tuple]") {
    struct ArgMax : Generator<ArgMax> {
        GeneratorParam<int> values{"values", 2, 1, 2};
        Input<Buffer<float, 2>> in{"in"};
        Output<Func> am{"am", {Float(32), Int(32)}, 1};
        void generate() {
            Var y("y");
            RDom r(0, in.width(), "r");
            if (values.value() == 1) {
                am(y) = in(0, y);
                return;
            }
            am(y) = Tuple(in(0, y), 0);
            am(y) = select(in(r, y) > am(y)[0], Tuple(in(r, y), r), Tuple(am(y)));
        }
    };
    ArgMax g;
    CHECK(names(g.arguments()) == std::vector<std::string>{"in", "am.0", "am.1"});
    CHECK_THAT(g.describe(), Contains("output  am: Tuple of 2 buffers (am.0 float32, am.1 int32), 1-D"));
    Pipeline p = g.build_pipeline();
    CHECK_THAT(p.compile_to_cpp_source("argmax", g.arguments(), Target("host")),
               Contains("extern \"C\" int argmax(halide_buffer_t *in_buffer, halide_buffer_t *am_0_buffer, "
                        "halide_buffer_t *am_1_buffer)") &&
                   Contains("kiln_check_buffer(am_1_buffer, \"argmax\", \"am.1\", halide_type_int, 32, 1)"));
    GeneratorCompileOptions o;
    o.output_dir = "generator_api_out";
    o.function_name = "api_argmax";
    o.emit = {"h"};
    compile_generator(g, o);
    std::ifstream h("generator_api_out/api_argmax.h");
    std::string text((std::istreambuf_iterator<char>(h)), {});
    CHECK_THAT(text, Contains("int api_argmax(struct halide_buffer_t *in, struct halide_buffer_t *am_0, "
                              "struct halide_buffer_t *am_1);") &&
                         Contains("//   am_1: output, int32 buffer, 1-D"));

    ArgMax one;
    one.set_generator_param("values", "1");
    require_compile_error([&] { one.build_pipeline(); },
                          Contains("generator: Output 'am' is declared with 2 value(s) (float32, int32) but generate() "
                                   "defines it with 1 (float32)") &&
                              Contains("Output<Func> am{\"am\", {type0, type1, ...}, dims}"));
}

TEST_CASE("generator api: members outside a generator, and clashing names", "[generator]") {
    require_compile_error([] { GeneratorParam<int> loose("loose", 1); },
                          Contains("GeneratorParam 'loose' is not a data member of a generator"));
    require_compile_error([] { Input<float> loose("loose"); }, Contains("Input 'loose' is not a data member"));
    struct Clash : Generator<Clash> {
        Input<float> x{"x"};
        Output<Buffer<float, 1>> out{"x"};
        void generate() {}
    };
    require_compile_error([] { Clash c; }, Contains("Output 'x': the name is already used by another"));
    struct BadName : Generator<BadName> {
        Input<float> x{"1x"};
        void generate() {}
    };
    require_compile_error([] { BadName b; }, Contains("Input '1x': \"1x\" is not a valid name"));
}

TEST_CASE("generator api: an explicit signature must fit the pipeline", "[generator]") {
    auto g = GeneratorRegistry::create("probe");
    Pipeline p = g->build_pipeline();
    std::vector<Argument> args = g->arguments();
    Target t("host");
    std::vector<Argument> no_input = {args[0], args[2], args[3]};
    require_compile_error([&] { p.compile_to_cpp_source("f", no_input, t); },
                          Contains("The pipeline reads ImageParam 'input', which is not in the signature"));
    std::vector<Argument> outputs_first = {args[3], args[0], args[1]};
    require_compile_error([&] { p.compile_to_cpp_source("f", outputs_first, t); },
                          Contains("The signature must end with the pipeline's outputs in order; argument 2 is 'input'"));
    std::vector<Argument> retyped = args;
    retyped[1].type = Float(32);
    require_compile_error([&] { p.compile_to_cpp_source("f", retyped, t); },
                          Contains("The signature declares 'input' as a float32 buffer of 2 dimension(s) but the "
                                   "pipeline reads it as a int16 buffer of 2 dimension(s)"));
    std::vector<Argument> twice = {args[0], args[0], args[1], args[3]};
    require_compile_error([&] { p.compile_to_cpp_source("f", twice, t); }, Contains("lists 'offset' twice"));
}

TEST_CASE("generator api: compile_generator applies the schedule and writes each kind", "[generator]") {
    auto g = GeneratorRegistry::create("blur3x3");
    GeneratorCompileOptions o;
    o.output_dir = "generator_api_out";
    o.function_name = "api_blur";
    o.schedule_file = KILN_SOURCE_DIR "/schedules/blur3x3/host_tiled.sched";
    o.emit = {"h", "stmt", "schedule", "flags"};
    compile_generator(*g, o);
    CHECK_THAT(read_file("generator_api_out/api_blur.h"),
               Contains("int api_blur(struct halide_buffer_t *input, struct halide_buffer_t *output);") &&
                   Contains("#include <HalideRuntime.h>") && Contains("kiln_error_input_too_small = -6"));
    CHECK_THAT(read_file("generator_api_out/api_blur.stmt"), Contains("parallel for (output.s0.y.y"));
    CHECK_THAT(read_file("generator_api_out/api_blur.sched"),
               Contains("output: tile(x, y, xi, yi, 256, 32) vectorize(xi, natural_vector_size) parallel(y)"));
    CHECK(read_file("generator_api_out/api_blur.flags") == kernel_compiler_flags(Target::host()) + "\n");

    o.emit = {"h", "pdf"};
    require_compile_error([&] { compile_generator(*g, o); },
                          Contains("Unknown emit kind \"pdf\"; the kinds are: h, cpp, stmt, schedule, flags"));
    o.emit = {"h"};
    o.function_name = "api-blur";
    require_compile_error([&] { compile_generator(*g, o); }, Contains("\"api-blur\" is not a C identifier"));
}

TEST_CASE("generator api: -s auto stops at a budget of schedules and writes the same schedule every time",
          "[generator][autoschedule]") {
    auto skipped = [](const std::string &explanation) {
        std::istringstream lines(explanation);
        std::vector<std::string> s;
        for (std::string l; std::getline(lines, l);)
            if (l.rfind("skipped: ", 0) == 0) s.push_back(l);
        return s;
    };
    std::string sched[2], why[2];
    for (int i = 0; i < 2; i++) {
        auto g = GeneratorRegistry::create("harris");
        GeneratorCompileOptions o;
        o.output_dir = "generator_api_out";
        o.function_name = "api_harris_auto";
        o.schedule_file = "auto";
        o.autoschedule_max_states = 6;
        o.emit = {"schedule", "autoschedule", "stmt_html"};
        o.estimates["output"] = {256, 256};
        compile_generator(*g, o);
        sched[i] = read_file("generator_api_out/api_harris_auto.sched");
        why[i] = read_file("generator_api_out/api_harris_auto.autoschedule.txt");
    }
    INFO(why[0]);
    CHECK(sched[0] == sched[1]);
    CHECK_THAT(sched[0], Contains("schedule auto (a budget of 6 schedules)") &&
                             Contains("not evaluated (state budget): the default rule"));
    CHECK(skipped(why[0]) == skipped(why[1]));
    CHECK_THAT(why[0], Contains("skipped: the search stopped at its budget of 6 evaluated schedules") &&
                           Contains("(budget: 6 schedules, 120000 ms of CPU time)"));
    CHECK(skipped(why[0]).size() >= 2);  // the budget, and a Func or group it left to the default rule
    // The loop-nest page carries the explanation as its Autoschedule panel.
    CHECK_THAT(read_file("generator_api_out/api_harris_auto.html"),
               Contains("id=\"autoschedule\"") && Contains("<div class=\"why-head\"><div>Autoschedule for output") &&
                   Contains("<details class=\"why\"><summary>"));
}

namespace {

// The .sched file `kiln-gen -s auto` writes for generator `name` at `estimates`.
std::string auto_schedule_of(const std::string &name, const std::map<std::string, std::vector<int>> &estimates) {
    auto g = GeneratorRegistry::create(name);
    GeneratorCompileOptions o;
    o.output_dir = "generator_api_out";
    o.function_name = "api_" + name + "_auto";
    o.schedule_file = "auto";
    o.emit = {"schedule"};
    o.estimates = estimates;
    compile_generator(*g, o);
    return read_file("generator_api_out/" + o.function_name + ".sched");
}

}  // namespace

TEST_CASE("generator api: -s auto re-places a group's root without losing the Funcs in its loops",
          "[generator][autoschedule][grad]") {
    // At these sizes the search's second placement pass (after tiling)
    // moves biased_adjoint off the root after output_adjoint was placed in
    // its loops; output_adjoint must go back to the root and be placed
    // again, not keep naming loops that no longer exist.
    const std::string sched = auto_schedule_of("bias_gelu_grad", {{"input", {131, 97}}, {"bias", {131}},
                                                                  {"d_output", {131, 97}}, {"d_input", {131, 97}},
                                                                  {"d_bias", {131}}});
    CHECK_THAT(sched, Contains("schedule auto (a budget of 1500 schedules)") && Contains("d_input: "));
    // Every Func computed at a group's loop names a Func the file schedules.
    std::istringstream lines(sched);
    for (std::string l; std::getline(lines, l);) {
        auto at = l.find("compute_at(");
        if (l.empty() || l[0] == '#' || at == std::string::npos) continue;
        std::string root = l.substr(at + 11, l.find(',', at) - at - 11);
        INFO(l);
        CHECK_THAT(sched, Contains("\n" + root + ": "));
    }
}

TEST_CASE("generator api: -s auto chooses a backward generator's forward pass for the adjoint's size",
          "[generator][autoschedule][grad]") {
    // The forward pass is chosen for the size of the adjoint it was given
    // (d_output), not the default 1024 per dimension. (At these sizes
    // elementwise_chain_grad saves stage1, so it has a forward pass;
    // bias_gelu_grad recomputes everything since session 44's model.)
    const std::string sched =
        auto_schedule_of("elementwise_chain_grad", {{"input", {131, 97}}, {"d_output", {131, 97}}, {"d_input", {131, 97}}});
    CHECK_THAT(sched, Contains("stage1: save"));
    CHECK_THAT(sched, Contains("_forward(), the forward pass") && Contains("output 131x97") && !Contains("1024x1024"));
}

TEST_CASE("generator api: -s auto schedules the forward pass from Funcs the backward search has not scheduled",
          "[generator][autoschedule][grad]") {
    // softmax_grad's backward schedule computes `output` at d_input's rows;
    // the forward pass, whose output it is, must not start from that (its
    // search could not lower and left the forward kernel unscheduled).
    const std::string sched = auto_schedule_of("softmax_grad", {{"input", {256, 64}}, {"d_output", {256, 64}},
                                                                {"d_input", {256, 64}}});
    INFO(sched);
    CHECK_THAT(sched, Contains("exps: save") && Contains("_forward(), the forward pass") &&
                          !Contains("could not schedule") && Contains("\n# output: split(y, "));
    // The residuals' sizes: exps as the forward output (256x64), row_sum one per row.
    CHECK_THAT(sched, Contains("exps 256x64") && Contains("row_sum 64") && !Contains("0.0 KiB"));
}

TEST_CASE("generator api: -s auto --autotune runs the best candidates on the generator's inputs",
          "[generator][autoschedule][autotune]") {
    auto g = GeneratorRegistry::create("blur3x3");
    GeneratorCompileOptions o;
    o.output_dir = "generator_api_out";
    o.function_name = "api_blur_autotuned";
    o.schedule_file = "auto";
    o.autoschedule_max_states = 8;
    o.autotune = 2;
    o.emit = {"schedule", "autoschedule"};
    o.estimates["output"] = {96, 40};
    compile_generator(*g, o);  // the generator's Inputs have no buffers: autotune makes its own
    const std::string sched = read_file("generator_api_out/api_blur_autotuned.sched");
    INFO(read_file("generator_api_out/api_blur_autotuned.autoschedule.txt"));
    CHECK_THAT(sched, Contains("schedule auto (a budget of 8 schedules, autotune 2: the fastest measured)") &&
                          Contains("# autotune: ran the 2 best candidates by predicted cost; ") &&
                          Contains("#   1 (the model's choice) predicted ") && !Contains("did not run"));

    o.schedule_file = KILN_SOURCE_DIR "/schedules/blur3x3/host_tiled.sched";
    require_compile_error([&] { compile_generator(*GeneratorRegistry::create("blur3x3"), o); },
                          Contains("kiln-gen --autotune 2 chooses among the autoscheduler's candidates; it needs -s "
                                   "auto, not -s "));
    o.schedule_file = "auto";
    o.estimates = {};
    require_compile_error([&] { compile_generator(*GeneratorRegistry::create("softmax_grad"), o); },
                          Contains("choose_saves: autotune 2 is not supported when the cost model also chooses the "
                                   "saves of a backward pipeline"));
}

TEST_CASE("generator api: a residual report whose recomputing counterfactual does not lower says so",
          "[generator][grad][residuals]") {
    // softmax_grad's saved_stats.sched as it was: without the saves, row_sum
    // would be computed at the root (as the main section says) and read exps,
    // which the backward kernel computes per band of rows: that does not
    // lower, and the report says why instead of failing.
    std::filesystem::create_directories("generator_api_out");
    std::ofstream("generator_api_out/stats_root.sched")
        << "d_input: split(y, yo, yi, 8) parallel(yo) vectorize(x, natural_vector_size)\n"
        << "row_max: save() compute_root() parallel(y)\n"
        << "row_max.update(0): split(r, ro, ri, 16) rfactor(ri, u, row_max_lanes) parallel(y)\n"
        << "row_max_lanes: compute_at(row_max, y) reorder_storage(u, y) vectorize(u)\n"
        << "row_max_lanes.update(0): reorder(u, ro) vectorize(u)\n"
        << "row_sum: save() compute_root() parallel(y)\n"
        << "exps: compute_at(d_input, yi) vectorize(x, natural_vector_size)\n"
        << "output_adjoint: compute_inline()\n"
        << "row_sum_adjoint: compute_at(d_input, yi)\n"
        << "exps_adjoint: compute_inline()\n"
        << "input_adjoint: compute_inline()\n"
        << "[forward]\n"
        << "exps: compute_inline()\n"
        << "row_sum.update(0): split(r, ro, ri, natural_vector_size) rfactor(ri, u, row_sum_lanes) parallel(y)\n"
        << "row_sum_lanes: compute_at(row_sum, y) vectorize(u)\n"
        << "row_sum_lanes.update(0): reorder(u, ro) vectorize(u)\n"
        << "output: split(y, yo, yi, 8) parallel(yo) vectorize(x, natural_vector_size)\n";
    auto g = GeneratorRegistry::create("softmax_grad");
    GeneratorCompileOptions o;
    o.output_dir = "generator_api_out";
    o.function_name = "api_softmax_grad";
    o.schedule_file = "generator_api_out/stats_root.sched";
    o.emit = {"report"};
    compile_generator(*g, o);
    CHECK_THAT(read_file("generator_api_out/api_softmax_grad.report.txt"),
               Contains("residuals in all: 8.0 KiB") &&
                   Contains("recomputing them instead:        not counted: this schedule does not lower without "
                            "the saves (") &&
                   Contains("Func exps is scheduled compute_at(d_input, yi)"));
    auto json = nlohmann::json::parse(read_file("generator_api_out/api_softmax_grad.report.json"));
    CHECK(json["saved"]["residual_bytes"] == 8192);
    CHECK_THAT(json["saved"]["recompute_error"].get<std::string>(), Contains("Func exps is scheduled"));
    CHECK(!json["saved"].contains("recompute_points_computed"));
}

TEST_CASE("generator api: a schedule that saves forward Funcs adds the forward kernel and its report",
          "[generator][grad][residuals]") {
    auto g = GeneratorRegistry::create("gemm_grad");
    GeneratorCompileOptions o;
    o.output_dir = "generator_api_out";
    o.function_name = "api_gemm_grad";
    o.schedule_file = KILN_SOURCE_DIR "/schedules/gemm_grad/saved_mask.sched";
    o.emit = {"h", "report"};
    for (const char *b : {"A", "B", "d_A", "d_B", "d_output", "output"}) o.estimates[b] = {512, 512};
    o.estimates["d_bias"] = {512};
    compile_generator(*g, o);
    CHECK_THAT(read_file("generator_api_out/api_gemm_grad.h"),
               Contains("int api_gemm_grad(struct halide_buffer_t *A, struct halide_buffer_t *B, struct "
                        "halide_buffer_t *bias, struct halide_buffer_t *d_output, struct halide_buffer_t "
                        "*bias_add_bits, struct halide_buffer_t *d_A,") &&
                   Contains("int api_gemm_grad_forward(struct halide_buffer_t *A, struct halide_buffer_t *B, struct "
                            "halide_buffer_t *bias, struct halide_buffer_t *output, struct halide_buffer_t "
                            "*bias_add_bits);") &&
                   Contains("bias_add_bits: bit x % 8 of byte x / 8 is (bias_add(x, ...) >= 0"));
    // 512 x 512 bits are 32 KiB; recomputing instead computes the product again.
    std::string report = read_file("generator_api_out/api_gemm_grad.report.txt");
    CHECK_THAT(report, Contains("bias_add_bits: bias_add, one bit per point, 32.0 KiB") &&
                           Contains("(computes B_in_matmul, matmul, bias_add again)"));
    auto json = nlohmann::json::parse(read_file("generator_api_out/api_gemm_grad.report.json"));
    CHECK(json["saved"]["residual_bytes"] == 32768);
    CHECK(json["saved"]["recompute_points_computed"].get<int64_t>() -
              json["saved"]["points_computed"].get<int64_t>() >= int64_t(512) * 512 * 512);

    // A float16 copy: 2 bytes a point, half of save()'s 1 MiB; the forward
    // kernel writes it, the backward kernel reads it.
    {
        std::string text = read_file(KILN_SOURCE_DIR "/schedules/gemm_grad/saved.sched");
        // (bias_add is no longer the forward pass's output, so it is put at
        // the root for matmul's blocks to be computed in its tiles)
        text.replace(text.find("bias_add: save()"), 16, "bias_add: save(float16) compute_root()");
        std::ofstream("generator_api_out/saved_f16.sched") << text;
        g = GeneratorRegistry::create("gemm_grad");
        o.schedule_file = "generator_api_out/saved_f16.sched";
        compile_generator(*g, o);
        CHECK_THAT(read_file("generator_api_out/api_gemm_grad.h"),
                   Contains("*bias_add_float16, struct halide_buffer_t *d_A,") &&
                       Contains("bias_add_float16: bias_add, rounded to float16"));
        CHECK_THAT(read_file("generator_api_out/api_gemm_grad.report.txt"),
                   Contains("bias_add_float16: bias_add, float16 copy, 512.0 KiB"));
        json = nlohmann::json::parse(read_file("generator_api_out/api_gemm_grad.report.json"));
        CHECK(json["saved"]["residual_bytes"] == 512 * 512 * 2);
        CHECK(json["saved"]["residuals"][0]["how"] == "float16");
    }

    // The budget: saved whole, bias_add takes 1 MiB.
    g = GeneratorRegistry::create("gemm_grad");
    o.schedule_file = KILN_SOURCE_DIR "/schedules/gemm_grad/saved.sched";
    o.residual_budget = 100000;
    require_compile_error([&] { compile_generator(*g, o); },
                          Contains("gemm_grad: the schedule saves 1024.0 KiB of residuals at the estimated sizes "
                                   "(bias_add 1024.0 KiB), over the budget of 100000 bytes"));
    g = GeneratorRegistry::create("gemm_grad");
    o.schedule_file = KILN_SOURCE_DIR "/schedules/gemm_grad/saved_mask.sched";
    CHECK_NOTHROW(compile_generator(*g, o));

    // Only a backward generator saves.
    g = GeneratorRegistry::create("gemm");
    o.residual_budget = 0;
    o.estimates = {};
    o.schedule_file = "generator_api_out/save_forward.sched";
    std::ofstream("generator_api_out/save_forward.sched") << "bias_add: save()\n";
    require_compile_error([&] { compile_generator(*g, o); },
                          Contains("gemm: the schedule saves bias_add (save()) for a backward pass, but gemm is not a "
                                   "backward generator"));
}

TEST_CASE("generator api: -s auto saves lower-precision copies only when allowed", "[generator][grad][residuals]") {
    // Which Funcs the search saves depends on the machine's caches; that the
    // option reaches choose_saves, and that only then a copy can be chosen,
    // does not (tests/correctness/test_saved_residuals.cpp checks a choice).
    for (kiln::Residual narrow : {kiln::Residual::None, kiln::Residual::BFloat16}) {
        auto g = GeneratorRegistry::create("softmax_grad");
        GeneratorCompileOptions o;
        o.output_dir = "generator_api_out";
        o.function_name = "api_softmax_grad_narrow";
        o.schedule_file = "auto";
        o.narrow_residuals = narrow;
        o.emit = {"schedule", "autoschedule"};
        compile_generator(*g, o);
        std::string why = read_file("generator_api_out/api_softmax_grad_narrow.autoschedule.txt");
        std::string sched = read_file("generator_api_out/api_softmax_grad_narrow.sched");
        INFO(why);
        if (narrow == kiln::Residual::None) {
            CHECK_THAT(why, !Contains("copies allowed"));
            CHECK_THAT(sched, !Contains("save(bfloat16)") && !Contains("save(float16)"));
        } else {
            CHECK_THAT(why, Contains("Saved for the backward pass (choose_saves), budget none, bfloat16 copies allowed"));
            CHECK_THAT(sched, !Contains("save(float16)"));
        }
    }
}

TEST_CASE("generator api: a residual is sized by what the backward kernel reads of it",
          "[generator][grad][residuals]") {
    // attention_grad's saved probs are queries x keys (seq x seq), its output
    // d x seq: with d != seq, the output's size would be the wrong guess.
    const int d = 16, seq = 48;
    auto g = GeneratorRegistry::create("attention_grad");
    GeneratorCompileOptions o;
    o.output_dir = "generator_api_out";
    o.function_name = "api_attention_grad";
    o.schedule_file = KILN_SOURCE_DIR "/schedules/attention_grad/saved.sched";
    o.emit = {"report"};
    for (const char *b : {"Q", "K", "V", "d_output", "output", "d_query", "d_key", "d_value"}) o.estimates[b] = {d, seq};
    compile_generator(*g, o);
    auto json = nlohmann::json::parse(read_file("generator_api_out/api_attention_grad.report.json"));
    std::map<std::string, int64_t> bytes;
    for (const auto &r : json["saved"]["residuals"]) bytes[r["buffer"].get<std::string>()] = r["bytes"].get<int64_t>();
    CHECK(bytes["probs"] == int64_t(seq) * seq * 4);
    CHECK(bytes["row_sum"] == int64_t(seq) * 4);
}

TEST_CASE("generator api: the fusion report of an NPU schedule has the simulator's figures", "[generator][npu]") {
    for (const char *name : {"softmax", "gemm"}) {
        auto g = GeneratorRegistry::create(name);
        bool gemm = std::string(name) == "gemm";
        g->set_generator_params({gemm ? "depth=128" : "width=1024"});
        GeneratorCompileOptions o;
        o.output_dir = "generator_api_out";
        o.function_name = std::string("npu_report_") + name;
        o.schedule_file = KILN_SOURCE_DIR "/schedules/" + std::string(name) + "/npu.sched";
        o.target = Target("npu");
        o.emit = {"report"};
        o.estimates = {{"output", {gemm ? 128 : 1024, 128}}};
        if (gemm) o.estimates["A"] = {128, 128};
        compile_generator(*g, o);
        std::ifstream jf("generator_api_out/npu_report_" + std::string(name) + ".report.json");
        nlohmann::json j = nlohmann::json::parse(jf);
        std::ifstream tf("generator_api_out/npu_report_" + std::string(name) + ".report.txt");
        std::string text((std::istreambuf_iterator<char>(tf)), {});
        CHECK_THAT(text, Contains("NPU (simulated on kiln-npu-default, 1 core(s), zero-filled inputs)") &&
                             Contains("on-chip footprint (peak bytes): "));
        CHECK(j["npu"]["cycles"].get<uint64_t>() > 0);
        if (!gemm) {  // fused: the simulator's GM traffic is the report's model (input once, output once)
            CHECK(j["npu"]["gm_read_bytes"] == 1024 * 128 * 4);
            CHECK(j["npu"]["gm_write_bytes"] == 1024 * 128 * 4);
            CHECK(j["npu"]["model_bytes"] == j["memory_bytes"]);
            CHECK(j["npu"]["model_bytes"] == 2 * 1024 * 128 * 4);
        } else {
            CHECK(j["npu"]["peak_bytes"]["L0B"] == 128 * 128 * 4);
            CHECK(j["npu"]["busy_ratio"]["M"].get<double>() > 0.1);
        }
    }
    // A bf16 pipeline's report runs its kernel on bf16 buffers (the kernel
    // refuses float32 ones): half the GM bytes of float32.
    auto g = GeneratorRegistry::create("softmax");
    g->set_generator_params({"width=1024", "type=bfloat16"});
    GeneratorCompileOptions o;
    o.output_dir = "generator_api_out";
    o.function_name = "npu_report_softmax_bf16";
    o.schedule_file = KILN_SOURCE_DIR "/schedules/softmax/npu.sched";
    o.target = Target("npu");
    o.emit = {"report"};
    o.estimates = {{"output", {1024, 128}}};
    compile_generator(*g, o);
    std::ifstream jf("generator_api_out/npu_report_softmax_bf16.report.json");
    nlohmann::json j = nlohmann::json::parse(jf);
    CHECK(j["npu"]["gm_read_bytes"] == 1024 * 128 * 2);
    CHECK(j["npu"]["gm_write_bytes"] == 1024 * 128 * 2);
}

// Every generator with a schedules/<name>/npu.sched: the fusion report's NPU
// traffic model (per tile, the box it reads or writes, rows in 32-byte blocks)
// equals the bytes the simulator moves, stencils' halos included.
TEST_CASE("generator api: the fusion report's NPU traffic model is the simulator's", "[generator][npu][report]") {
    struct Case {
        std::vector<std::string> params;
        std::map<std::string, std::vector<int>> estimates;
    };
    const std::map<std::string, Case> cases = {
        {"attention",
         {{"dim=64", "seq=128"}, {{"output", {64, 128}}, {"Q", {64, 128}}, {"K", {64, 128}}, {"V", {64, 128}}}}},
        {"blur3x3", {{}, {{"output", {1024, 128}}}}},
        {"elementwise_chain", {{"variant=softplus"}, {{"output", {1024, 128}}}}},
        {"elementwise_chain_grad", {{"variant=tanh_affine"}, {{"d_input", {1024, 256}}}}},
        {"gemm", {{"depth=128"}, {{"output", {128, 1024}}, {"A", {128, 1024}}}}},
        {"harris", {{}, {{"input", {1024, 128, 3}}, {"output", {1024, 128}}}}},
        {"layernorm", {{"width=1024"}, {{"output", {1024, 128}}}}},
        {"softmax", {{"width=1024"}, {{"output", {1024, 128}}}}},
        {"unsharp", {{}, {{"output", {1024, 128}}}}},
    };
    int checked = 0;
    for (const auto &dir : std::filesystem::directory_iterator(KILN_SOURCE_DIR "/schedules")) {
        const std::string name = dir.path().filename().string();
        if (!std::filesystem::exists(dir.path() / "npu.sched")) continue;
        INFO(name << ": add its parameters and sizes to this test's cases");
        REQUIRE(cases.count(name));
        auto g = GeneratorRegistry::create(name);
        g->set_generator_params(cases.at(name).params);
        GeneratorCompileOptions o;
        o.output_dir = "generator_api_out";
        o.function_name = "npu_traffic_" + name;
        o.schedule_file = (dir.path() / "npu.sched").string();
        o.target = Target("npu");
        o.emit = {"report"};
        o.estimates = cases.at(name).estimates;
        compile_generator(*g, o);
        nlohmann::json j = nlohmann::json::parse(read_file("generator_api_out/npu_traffic_" + name + ".report.json"));
        INFO(j["npu_model"].dump() << " against the simulator's " << j["npu"]["gm_read_bytes"] << " read, "
                                   << j["npu"]["gm_write_bytes"] << " written");
        CHECK(j["npu_model"]["exact"] == true);
        CHECK(j["npu_model"]["gm_read_bytes"] == j["npu"]["gm_read_bytes"]);
        CHECK(j["npu_model"]["gm_write_bytes"] == j["npu"]["gm_write_bytes"]);
        CHECK(j["npu"]["model_bytes"] == j["npu"]["gm_read_bytes"].get<int64_t>() + j["npu"]["gm_write_bytes"].get<int64_t>());
        if (name == "blur3x3")  // 64 tiles of 34 rows of 66 floats, each row moved as 288 bytes; the host model reads it once
            CHECK((j["npu_model"]["gm_read_bytes"] == 64 * 34 * 288 && j["input_bytes"] == 1024 * 128 * 4));
        checked++;
    }
    CHECK(checked == (int)cases.size());
    // Rows longer than UB (schedules/<name>/npu_long.sched): the input read once per reduction and once more
    // by the output, chunk by chunk; gamma and beta per chunk of each row tile.
    for (const std::string name : {"layernorm", "softmax"}) {
        INFO(name << " npu_long.sched");
        auto g = GeneratorRegistry::create(name);
        g->set_generator_params({"width=16384"});
        GeneratorCompileOptions o;
        o.output_dir = "generator_api_out";
        o.function_name = "npu_traffic_long_" + name;
        o.schedule_file = KILN_SOURCE_DIR "/schedules/" + name + "/npu_long.sched";
        o.target = Target("npu");
        o.emit = {"report"};
        o.estimates = {{"output", {16384, 64}}};
        compile_generator(*g, o);
        nlohmann::json j = nlohmann::json::parse(read_file("generator_api_out/npu_traffic_long_" + name + ".report.json"));
        CHECK(j["npu_model"]["exact"] == true);
        CHECK(j["npu_model"]["gm_read_bytes"] == j["npu"]["gm_read_bytes"]);
        CHECK(j["npu_model"]["gm_write_bytes"] == j["npu"]["gm_write_bytes"]);
        const int64_t bytes = 16384 * 64 * 4;
        CHECK(j["npu"]["gm_read_bytes"] == 3 * bytes + (name == "layernorm" ? 4 * 2 * 16384 * 4 : 0));
        CHECK(j["npu"]["gm_write_bytes"] == bytes);
    }
    {
        // Flash attention (algorithm=online_planes, schedules/attention/online_planes/npu.sched): per tile of
        // 64 query rows K and V once, Q once (in L1), the output once.
        auto g = GeneratorRegistry::create("attention");
        g->set_generator_params({"dim=64", "seq=1024", "key_block=64", "algorithm=online_planes"});
        GeneratorCompileOptions o;
        o.output_dir = "generator_api_out";
        o.function_name = "npu_traffic_flash";
        o.schedule_file = KILN_SOURCE_DIR "/schedules/attention/online_planes/npu.sched";
        o.target = Target("npu");
        o.emit = {"report"};
        o.estimates = {{"output", {64, 256}}, {"Q", {64, 256}}, {"K", {64, 1024}}, {"V", {64, 1024}}};
        compile_generator(*g, o);
        nlohmann::json j = nlohmann::json::parse(read_file("generator_api_out/npu_traffic_flash.report.json"));
        CHECK(j["npu_model"]["exact"] == true);
        CHECK(j["npu_model"]["gm_read_bytes"] == j["npu"]["gm_read_bytes"]);
        CHECK(j["npu_model"]["gm_write_bytes"] == j["npu"]["gm_write_bytes"]);
        CHECK(j["npu"]["gm_read_bytes"] == (256 / 64) * 2 * 64 * 1024 * 4 + 64 * 256 * 4);
        CHECK(j["npu"]["gm_write_bytes"] == 64 * 256 * 4);
    }
    // Funcs in GM (compute_root): each written once in tiles, read back in its consumers' windows.
    for (const auto &[name, sched] : std::vector<std::pair<std::string, std::string>>{
             {"blur3x3", "output: tile(x, y, xo, yo, xi, yi, 64, 32)\n"
                         "blur_x: compute_root() tile(x, y, xo, yo, xi, yi, 64, 32)\n"},
             {"softmax", "output: bound(x, 0, 1024) split(y, yo, yi, 2)\n"
                         "exps: compute_root() bound(x, 0, 1024) split(y, yo, yi, 2)\n"
                         "row_max: compute_at(exps, yo)\nrow_sum: compute_at(output, yo)\n"}}) {
        INFO(name << " through GM");
        auto g = GeneratorRegistry::create(name);
        g->set_generator_params(cases.at(name).params);
        std::ofstream("generator_api_out/npu_traffic_gm.sched") << sched;
        GeneratorCompileOptions o;
        o.output_dir = "generator_api_out";
        o.function_name = "npu_traffic_gm_" + name;
        o.schedule_file = "generator_api_out/npu_traffic_gm.sched";
        o.target = Target("npu");
        o.emit = {"report"};
        o.estimates = cases.at(name).estimates;
        compile_generator(*g, o);
        nlohmann::json j = nlohmann::json::parse(read_file("generator_api_out/npu_traffic_gm_" + name + ".report.json"));
        CHECK(j["npu_model"]["gm_read_bytes"] == j["npu"]["gm_read_bytes"]);
        CHECK(j["npu_model"]["gm_write_bytes"] == j["npu"]["gm_write_bytes"]);
        CHECK(j["npu"]["gm_write_bytes"].get<int64_t>() > j["output_bytes"].get<int64_t>());  // the Func's own writes
    }
}

TEST_CASE("generator api: -s auto for the NPU writes a schedule that compiles and the simulator's figures",
          "[generator][npu][autoschedule]") {
    auto g = GeneratorRegistry::create("gemm");
    g->set_generator_params({"depth=128"});
    GeneratorCompileOptions o;
    o.output_dir = "generator_api_out";
    o.function_name = "npu_auto_gemm";
    o.schedule_file = "auto";
    o.target = Target("npu");
    o.emit = {"h", "cpp", "schedule", "report"};
    o.estimates = {{"output", {128, 256}}, {"A", {128, 256}}};
    compile_generator(*g, o);
    std::ifstream sf("generator_api_out/npu_auto_gemm.sched");
    std::string sched((std::istreambuf_iterator<char>(sf)), {});
    // The product accumulates per tile in L0C; the tiles are whole rows of the estimated width.
    CHECK_THAT(sched, Contains("matmul: compute_at(output, yo) store_in(L0C)") &&
                          Contains("output: bound(x, 0, 128) split(y, yo, yi, ") && Contains(" cycles (+"));
    std::ifstream jf("generator_api_out/npu_auto_gemm.report.json");
    nlohmann::json j = nlohmann::json::parse(jf);
    CHECK(j["npu"]["busy_ratio"]["M"].get<double>() > 0);
    CHECK(j["npu"]["cycles"].get<uint64_t>() > 0);

    // Attention's key transpose cannot be a tile of its own: the search
    // inlines it (the product reads K transposed) and says why.
    auto a = GeneratorRegistry::create("attention");
    a->set_generator_params({"dim=64", "seq=128"});
    o.function_name = "npu_auto_attention";
    o.emit = {"schedule", "autoschedule", "report"};
    o.estimates = {{"output", {64, 256}}, {"Q", {64, 256}}, {"K", {64, 128}}, {"V", {64, 128}}};
    compile_generator(*a, o);
    std::ifstream af("generator_api_out/npu_auto_attention.sched");
    std::string asched((std::istreambuf_iterator<char>(af)), {});
    CHECK_THAT(asched, Contains("# key_t: inline") && Contains("scores: compute_at(output, io) store_in(L0C)") &&
                           Contains("weighted: compute_at(output, io) store_in(L0C)"));
    std::ifstream ef("generator_api_out/npu_auto_attention.autoschedule.txt");
    std::string why((std::istreambuf_iterator<char>(ef)), {});
    CHECK_THAT(why, Contains("skipped: key_t is inlined: NPU target: Func key_t reads K("));
    std::ifstream rf("generator_api_out/npu_auto_attention.report.json");
    CHECK(nlohmann::json::parse(rf)["npu"]["cycles"].get<uint64_t>() > 0);
}

TEST_CASE("generator api: an output's buffer constraints and fields", "[generator][buffer_constraints]") {
    struct Fixed : Generator<Fixed> {
        Input<Buffer<float, 2>> input{"input"};
        Output<Buffer<float, 2>> output{"output"};
        void generate() {
            Var x("x"), y("y"), xo("xo"), xi("xi");
            output(x, y) = input(x, y) * 2.0f;
            output.dim(0).set_bounds(0, 64);
            input.dim(1).set_stride(64);
            Func(output).split(x, xo, xi, output.width() / 4).bound(y, output.dim(1).min(), output.height());
        }
    };
    Fixed g;
    Pipeline p = g.build_pipeline();
    const std::string src = p.compile_to_cpp_source("fixed", g.arguments(), Target("host"));
    CHECK_THAT(src, Contains("input 'input' has stride ") && Contains("(input.dim(1).set_stride(64))") &&
                        Contains("(output.output_buffer().dim(0).set_extent(64))") && Contains("return -15;"));
    CHECK(g.arguments().size() == 2);  // the output's buffer is no argument of its own
}
