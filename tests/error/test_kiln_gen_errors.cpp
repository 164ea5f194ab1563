// Misuse of kiln-gen, run as the user runs it (a subprocess): unknown
// generators, GeneratorParams, target features and emit kinds, bad values,
// missing files, schedule files that do not fit the generator. Each exits
// with status 1 and one "kiln-gen: error: ..." line saying what to fix —
// never status 2, the internal-error status. And the command lines that
// used to be misread: GeneratorParams after -e or --estimate.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "expect_error.h"

namespace {

struct Run {
    int status;
    std::string output;  // stdout and stderr
};

// The scratch directory kiln-gen runs in.
std::filesystem::path scratch_dir() { return scratch_directory(); }

// kiln-gen with these arguments (shell words), writing into the scratch directory.
Run kiln_gen(const std::string &args) {
    auto dir = scratch_dir();
    std::string cmd = std::string(KILN_GEN_PATH) + " " + args + " 2>&1";
    Run r{-1, ""};
    FILE *p = ::popen(("cd " + dir.string() + " && " + cmd).c_str(), "r");
    REQUIRE(p);
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof(buf), p)) > 0;) r.output.append(buf, n);
    int st = ::pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}

std::string write_sched(const std::string &name, const std::string &text) {
    auto path = scratch_dir() / name;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
    return path.string();
}

// kiln-gen fails as a user error (status 1) with a message matching m.
#define REQUIRE_KILN_GEN_ERROR(args, m)             \
    do {                                            \
        Run r = kiln_gen(args);                     \
        INFO(r.output);                             \
        CHECK(r.status == 1);                       \
        CHECK_THAT(r.output, Contains("kiln-gen: error: ") && m); \
    } while (0)

// The text of a file kiln-gen wrote into the scratch directory ("" if missing).
std::string read_output(const std::string &name) {
    std::ifstream f(scratch_dir() / name);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("kiln-gen: GeneratorParams after -e and --estimate are GeneratorParams", "[error][kiln-gen]") {
    // As GenGen accepts: -e and --estimate take one word each, the rest are name=value settings.
    std::filesystem::remove_all(scratch_dir() / "params_after");
    Run r = kiln_gen("-g softmax -o params_after -e h,cpp,report width=1024");
    INFO(r.output);
    REQUIRE(r.status == 0);
    CHECK_THAT(read_output("params_after/softmax.h"),
               Contains("generator softmax, algorithm=two_pass, type=float32, width=1024,"));
    // width=1024 fixes the row length at compile time: the reductions run to a constant.
    CHECK_THAT(read_output("params_after/softmax.cpp"), Contains("_end = 1024;"));
    CHECK_THAT(read_output("params_after/softmax.report.txt"), Contains("output 1024x1024"));

    r = kiln_gen("-g softmax -o params_after -f sm_online -e h,report --estimate output=512,64 algorithm=online");
    INFO(r.output);
    REQUIRE(r.status == 0);
    CHECK_THAT(read_output("params_after/sm_online.h"), Contains("generator softmax, algorithm=online,"));
    CHECK_THAT(read_output("params_after/sm_online.report.txt"), Contains("output 512x64"));
}

TEST_CASE("kiln-gen: --help lists every target and the one-word -e", "[error][kiln-gen]") {
    Run r = kiln_gen("--help");
    INFO(r.output);
    CHECK(r.status == 0);
    CHECK_THAT(r.output, Contains("host, npu (the simulated tile-NPU, docs/npu.md) or x86-64-linux") &&
                             Contains("-e,--emit KINDS") && Contains("--estimate NAME=W,H"));
}

TEST_CASE("error: kiln-gen with -e given several words", "[error][kiln-gen]") {
    REQUIRE_KILN_GEN_ERROR("-g blur3x3 -o out -e h cpp",
                           Contains("\"cpp\" is not a GeneratorParam setting (name=value); -e takes one "
                                    "comma-separated word: -e h,cpp"));
}

TEST_CASE("error: kiln-gen with an unknown generator", "[error][kiln-gen]") {
    REQUIRE_KILN_GEN_ERROR("-g blur5x5 -o out", Contains("Unknown generator \"blur5x5\"") &&
                                                    Contains("the generators linked into this program are: ") && Contains("blur3x3"));
}

TEST_CASE("error: kiln-gen with an unknown GeneratorParam", "[error][kiln-gen]") {
    REQUIRE_KILN_GEN_ERROR("-g unsharp -o out radius=3", Contains("unsharp has no GeneratorParam 'radius'"));
}

TEST_CASE("error: kiln-gen with a GeneratorParam value of the wrong kind", "[error][kiln-gen]") {
    REQUIRE_KILN_GEN_ERROR("-g unsharp -o out type=float7", Contains("GeneratorParam 'type' cannot be \"float7\"") &&
                                                                Contains("it is a type: one of"));
}

TEST_CASE("error: kiln-gen with a GeneratorParam without a value", "[error][kiln-gen]") {
    REQUIRE_KILN_GEN_ERROR("-g unsharp -o out type", Contains("type") && Contains("name=value"));
}

TEST_CASE("error: kiln-gen with an unknown target feature", "[error][kiln-gen]") {
    REQUIRE_KILN_GEN_ERROR("-g blur3x3 -t host-avx9000 -o out",
                           Contains("Unknown feature \"avx9000\" in target \"host-avx9000\"") && Contains("avx2"));
}

TEST_CASE("error: kiln-gen with an unknown emit kind", "[error][kiln-gen]") {
    REQUIRE_KILN_GEN_ERROR("-g blur3x3 -e h,pdf -o out",
                           Contains("Unknown emit kind \"pdf\"; the kinds are: h, cpp, stmt"));
}

TEST_CASE("error: kiln-gen with a function name that is not a C identifier", "[error][kiln-gen]") {
    REQUIRE_KILN_GEN_ERROR("-g blur3x3 -f 9lives -o out", Contains("The function name \"9lives\" is not a C identifier"));
}

TEST_CASE("error: kiln-gen without an output directory", "[error][kiln-gen]") {
    REQUIRE_KILN_GEN_ERROR("-g blur3x3", Contains("-o DIR is required"));
}

TEST_CASE("error: kiln-gen with a bad --estimate", "[error][kiln-gen]") {
    REQUIRE_KILN_GEN_ERROR("-g blur3x3 -o out -e report --estimate output=0,64",
                           Contains("--estimate output=0,64: \"0\" is not a positive size"));
    REQUIRE_KILN_GEN_ERROR("-g blur3x3 -o out -e report --estimate 4096",
                           Contains("--estimate 4096: expected name=W[,H[,C]]"));
    REQUIRE_KILN_GEN_ERROR("-g blur3x3 -o out -e report --estimate outptu=64,64",
                           Contains("Estimate for 'outptu': blur3x3 has no buffer Input or Output named 'outptu'; "
                                    "its buffers are: input, output"));
    REQUIRE_KILN_GEN_ERROR("-g blur3x3 -o out -e report --estimate output=4096",
                           Contains("Estimate for 'output': it has 2 dimension(s), so give as many sizes, e.g. "
                                    "output=1024,1024"));
}

TEST_CASE("error: kiln-gen with --narrow-residuals misused", "[error][kiln-gen]") {
    REQUIRE_KILN_GEN_ERROR("-g softmax_grad -o out -s auto --narrow-residuals int8",
                           Contains("--narrow-residuals int8: give float16 or bfloat16"));
    REQUIRE_KILN_GEN_ERROR("-g softmax -o out -s auto --narrow-residuals float16",
                           Contains("kiln-gen --narrow-residuals float16 lets the autoscheduler save lower-precision "
                                    "copies of forward Funcs; it needs a backward generator and -s auto"));
}

TEST_CASE("error: kiln-gen with a missing schedule file", "[error][kiln-gen]") {
    REQUIRE_KILN_GEN_ERROR("-g blur3x3 -o out -s nowhere.sched",
                           Contains("nowhere.sched: cannot open the schedule file for reading"));
}

TEST_CASE("error: kiln-gen with a schedule file for another generator", "[error][kiln-gen]") {
    std::string path = write_sched("brighten.sched", "brighten: vectorize(x, 8)\n");
    REQUIRE_KILN_GEN_ERROR("-g blur3x3 -o out -s " + path,
                           Contains(path + ":1:1: no Func named 'brighten' in the pipeline") &&
                               Contains("(its Funcs: blur_x, input_im_repeat_edge, output)"));
}

TEST_CASE("error: kiln-gen with a schedule the compiler rejects", "[error][kiln-gen]") {
    std::string path = write_sched("wide.sched", "output: vectorize(x, 1000)\n");
    REQUIRE_KILN_GEN_ERROR("-g blur3x3 -o out -s " + path,
                           Contains("vectorized with 1000 lanes; at most 64 lanes") && Contains("use a smaller factor"));
}

TEST_CASE("error: kiln-gen with a [forward] section but no forward kernel", "[error][kiln-gen][forward]") {
    // A backward generator whose schedule saves nothing has no forward kernel to schedule.
    std::string path = write_sched("fwd_unsaved.sched", "d_input: parallel(y)\n[forward]\noutput: parallel(y)\n");
    REQUIRE_KILN_GEN_ERROR("-g softmax_grad -o out -s " + path,
                           Contains(path + ": its [forward] section schedules the forward pass of a backward "
                                           "generator that saves Funcs, but with this schedule softmax_grad saves "
                                           "none (no save())") &&
                               Contains("save() a forward Func or remove the section"));
    // A forward generator has none either.
    path = write_sched("fwd_forward_gen.sched", "[forward]\noutput: parallel(y)\n");
    REQUIRE_KILN_GEN_ERROR("-g blur3x3 -o out -s " + path, Contains("blur3x3 saves none"));
    // The section's names are looked up among the forward pass's Funcs.
    path = write_sched("fwd_misnamed.sched", "row_sum: save() compute_root()\n[forward]\nd_input: parallel(y)\n");
    REQUIRE_KILN_GEN_ERROR("-g softmax_grad -o out -s " + path, Contains(path + ":3:1: no Func named 'd_input'"));
}
