// kiln-gen: compile a registered generator with a schedule file for a target.
//
//   kiln-gen -g blur3x3 -s schedules/blur3x3/host_tiled.sched -t host -o out -f blur3x3_tiled -e h,cpp
//   kiln-gen -g softmax -o out -e h,cpp,report width=1024   GeneratorParams (name=value) anywhere
//   kiln-gen --list                      every generator linked in, with its params, inputs and outputs
//   kiln-gen --print-cxx-flags -t host   the flags an emitted kernel is compiled with
//
// The generators are whatever is linked into this program with
// KILN_REGISTER_GENERATOR (for kiln-gen itself: generators/*.cpp).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "kiln/Autoschedule.h"
#include "kiln/Generator.h"

namespace {

std::string join(const std::vector<std::string> &v, const std::string &sep = ", ") {
    std::string s;
    for (const std::string &x : v) s += (s.empty() ? "" : sep) + x;
    return s;
}

// The command line, parsed.
struct Command {
    std::string generator, target = "host";
    std::vector<std::string> params, estimates;
    std::string narrow_residuals;
    bool list = false, print_flags = false;
    kiln::GeneratorCompileOptions compile;  // all but the target
};

int run(const CLI::App &app, Command &c) {
    using namespace kiln;
    // "-e h cpp": the second word is read as a GeneratorParam; say what was meant.
    const auto &kinds = generator_emit_kinds();
    for (const std::string &p : c.params) {
        if (std::find(kinds.begin(), kinds.end(), p) == kinds.end()) continue;
        std::vector<std::string> emit = c.compile.emit;
        if (std::find(emit.begin(), emit.end(), p) == emit.end()) emit.push_back(p);
        throw CompileError("\"" + p + "\" is not a GeneratorParam setting (name=value); -e takes one "
                           "comma-separated word: -e " + join(emit, ","));
    }
    c.compile.target = Target(c.target);
    if (c.narrow_residuals == "float16") c.compile.narrow_residuals = Residual::Float16;
    else if (c.narrow_residuals == "bfloat16") c.compile.narrow_residuals = Residual::BFloat16;
    else if (!c.narrow_residuals.empty())
        throw CompileError("--narrow-residuals " + c.narrow_residuals + ": give float16 or bfloat16 (bits are "
                           "chosen without it wherever the backward pass reads only a comparison)");
    for (const std::string &e : c.estimates) {
        // name=W[,H[,C]]
        size_t eq = e.find('=');
        if (eq == std::string::npos || eq == 0)
            throw CompileError("--estimate " + e + ": expected name=W[,H[,C]], e.g. --estimate output=4096,4096");
        std::vector<int> ext;
        std::stringstream ss(e.substr(eq + 1));
        for (std::string part; std::getline(ss, part, ',');) {
            char *end = nullptr;
            long v = std::strtol(part.c_str(), &end, 10);
            if (part.empty() || *end != 0 || v <= 0 || v >= (1l << 30))
                throw CompileError("--estimate " + e + ": \"" + part + "\" is not a positive size");
            ext.push_back((int)v);
        }
        c.compile.estimates[e.substr(0, eq)] = ext;
    }
    if (c.print_flags) {
        std::cout << kernel_compiler_flags(c.compile.target) << "\n";
        return 0;
    }
    if (c.list) {
        std::vector<std::string> names = c.generator.empty() ? GeneratorRegistry::list() : std::vector<std::string>{c.generator};
        for (const std::string &name : names) {
            auto g = GeneratorRegistry::create(name);
            g->set_generator_params(c.params);
            std::cout << g->describe();
        }
        return 0;
    }
    if (c.generator.empty() || c.compile.output_dir.empty()) {
        std::cerr << "kiln-gen: error: " << (c.generator.empty() ? "-g GENERATOR" : "-o DIR")
                  << " is required; the generators are: " << join(GeneratorRegistry::list()) << "\n\n"
                  << app.help();
        return 1;
    }
    auto g = GeneratorRegistry::create(c.generator);
    g->set_generator_params(c.params);
    compile_generator(*g, c.compile);
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    CLI::App app{"kiln-gen: compile a Kiln generator (an algorithm) with a schedule file (.sched) into C++ for a "
                 "target.\nWrites DIR/FUNCTION.h, DIR/FUNCTION.cpp, ... as -e asks.",
                 "kiln-gen"};
    Command c;
    c.compile.output_dir.clear();  // -o has no default: it is required to compile
    app.add_option("-g,--generator", c.generator, "The generator to compile (see --list)");
    app.add_option("-s,--schedule", c.compile.schedule_file, "The schedule file to apply, or auto: Kiln chooses one for the --estimate sizes "
                   "(docs/autoschedule.md; -e schedule,autoschedule writes it and why). Default: every Func inlined");
    app.add_option("-t,--target", c.target, "host, npu (the simulated tile-NPU, docs/npu.md) or "
                                            "x86-64-linux, each followed by [-feature...]; features: sse41, avx, "
                                            "avx2, fma, avx512, fast_math, no_asserts, trace, npu")
        ->capture_default_str();
    app.add_option("-o,--output-dir", c.compile.output_dir, "The directory to write into (created if missing)");
    app.add_option("-f,--function", c.compile.function_name,
                   "The name of the generated function (default: the generator's)");
    // Each occurrence of -e and --estimate takes exactly one word, so GeneratorParams may
    // follow them, as in GenGen: kiln-gen ... -e h,cpp,report width=1024.
    app.add_option("-e,--emit", c.compile.emit, "What to write, comma-separated: " + join(kiln::generator_emit_kinds()))
        ->delimiter(',')
        ->allow_extra_args(false)
        ->type_name("KINDS")
        ->capture_default_str();
    app.add_flag("--list", c.list, "List the generators (or the one given by -g) with their params, inputs and outputs");
    app.add_flag("--print-cxx-flags", c.print_flags, "Print the compiler flags an emitted kernel for -t needs");
    app.add_option("--estimate", c.estimates,
                   "A buffer size for -s auto and -e report / stmt_html: name=W[,H[,C]]; one per --estimate. Without "
                   "any, the generator's own (set_estimates()); outputs neither gives are 1024 per dimension")
        ->allow_extra_args(false)
        ->type_name("NAME=W,H");
    app.add_option("--residual-budget", c.compile.residual_budget,
                   "The most bytes the forward Funcs a backward generator's schedule saves (save()) may take at the "
                   "--estimate sizes; over it is an error naming each residual's size");
    app.add_option("--narrow-residuals", c.narrow_residuals,
                   "-s auto for a backward generator: let the search save a float16 or bfloat16 copy of a forward "
                   "Func where that is predicted cheaper than saving it whole (gradients then differ by the "
                   "rounding; docs/autodiff.md)")
        ->type_name("float16|bfloat16");
    app.add_option("--max-states", c.compile.autoschedule_max_states,
                   "-s auto: the most schedules the search evaluates (default " +
                       std::to_string(kiln::AutoscheduleOptions::generator_max_states) +
                       "; without it the search also stops at 1 s of CPU time per 30 Funcs); a budget given is in schedules, "
                       "not time, so the same build chooses the same schedule")
        ->check(CLI::Range(1, 100000000));
    app.add_option("--autotune", c.compile.autotune,
                   "-s auto: run the N best candidate schedules by predicted cost on random inputs of the --estimate "
                   "sizes and keep the fastest (host: timed, so the build depends on the machine's load; npu: "
                   "simulated, the fewest cycles)")
        ->type_name("N");
    app.add_option("params", c.params, "GeneratorParam settings, name=value");
    app.footer("Example:\n  kiln-gen -g blur3x3 -s schedules/blur3x3/host_tiled.sched -t host -o build/out "
               "-f blur3x3_tiled\n\nGenerators linked in: " + join(kiln::GeneratorRegistry::list()));
    CLI11_PARSE(app, argc, argv);
    try {
        return run(app, c);
    } catch (const kiln::CompileError &e) {
        std::cerr << "kiln-gen: error: " << e.what() << "\n";
        return 1;
    } catch (const kiln::InternalError &e) {
        std::cerr << "kiln-gen: internal compiler error (please report it): " << e.what() << "\n";
        return 2;
    } catch (const std::exception &e) {
        std::cerr << "kiln-gen: error: " << e.what() << "\n";
        return 1;
    }
}
