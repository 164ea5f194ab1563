// kiln-lab: one generator, several schedules, one image — what does each
// schedule buy? (docs/lab.md)
//
//   kiln-lab blur3x3 --input apps/data/scene.png
//
// For every schedule file a fresh generator object builds the pipeline
// (a schedule cannot be undone), the file is applied, the inputs are bound
// and the pipeline is JIT-compiled and run: the first run (compilation or
// JIT-cache load included) is reported apart from the best of --runs timed
// runs. Every output is checked against the first schedule's, and the
// fusion report (Pipeline::report) gives the memory traffic, the bytes saved
// against the unfused baseline, the largest intermediate allocation and the
// worst recompute factor. This file runs the schedules; lab_results.cpp
// prints the table and writes report.json, chart.svg, a stmt_html page and
// (for a PNG input) the output image of every schedule into --out.
#include <kiln/Generator.h>
#include <kiln/StmtHTML.h>
#include <kiln/kiln.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "image_ops.h"
#include "lab.h"
#include "lab_buffers.h"
#include "png_io.h"

#ifndef KILN_LAB_SCHEDULE_DIR  // set by apps/lab/CMakeLists.txt to the source tree's schedules/
#define KILN_LAB_SCHEDULE_DIR "schedules"
#endif

namespace {

namespace fs = std::filesystem;
using Halide::Runtime::Buffer;
using kiln_lab::Options;
using kiln_lab::Outcome;
using kiln_lab::Setup;

[[noreturn]] void usage_error(const std::string &message) { throw kiln::CompileError(message); }

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Milliseconds of CPU time used by this process (all its threads) so far.
double cpu_ms() { return 1000.0 * (double)std::clock() / CLOCKS_PER_SEC; }

// One line of progress on stderr, rewritten in place on a terminal; when
// stderr is not a terminal, only the steps (not every run) are logged.
class Progress {
public:
    Progress() : tty_(isatty(fileno(stderr))) {}
    void show(const std::string &line, bool step = true) {
        if (tty_) std::fprintf(stderr, "\r\033[K%s", line.c_str());
        else if (step) std::fprintf(stderr, "%s\n", line.c_str());
        std::fflush(stderr);
    }
    void clear() {
        if (tty_) std::fprintf(stderr, "\r\033[K");
    }

private:
    bool tty_;
};

// The schedule files: the ones given, or every schedules/<generator>/*.sched
// for the target with unfused.sched first (the baseline of the speedups).
// NPU schedules are the files named npu*.sched: they are taken for the npu
// target and left out for the host (their tiles assume the NPU's sizes).
// Schedules of another variant of the algorithm sit in a subdirectory named
// after the GeneratorParam value that selects it: `-p algorithm=online`
// takes schedules/softmax/online/*.sched instead.
std::vector<std::string> schedule_files(const Options &o) {
    if (!o.schedules.empty()) return o.schedules;
    fs::path dir = fs::path(KILN_LAB_SCHEDULE_DIR) / o.generator;
    if (!fs::is_directory(dir))
        usage_error("no schedule directory " + dir.string() + "; give schedule files with --schedule");
    for (const std::string &p : o.params) {
        std::string value = p.substr(p.find('=') + 1);
        if (!value.empty() && value.find('/') == std::string::npos && value != "." && value != ".." &&
            fs::is_directory(dir / value))
            dir /= value;
    }
    const bool npu = kiln::Target(o.target).has(kiln::Target::NPU);
    std::vector<std::string> files;
    for (const auto &e : fs::directory_iterator(dir))
        if (e.path().extension() == ".sched" && (e.path().stem().string().rfind("npu", 0) == 0) == npu)
            files.push_back(e.path().string());
    std::sort(files.begin(), files.end(), [](const std::string &a, const std::string &b) {
        bool ua = fs::path(a).stem() == "unfused", ub = fs::path(b).stem() == "unfused";
        return ua != ub ? ua : a < b;
    });
    if (files.empty()) usage_error("no .sched files in " + dir.string());
    return files;
}

// Schedule names for the table and file names: the file stems, made unique.
std::vector<std::string> schedule_names(const std::vector<std::string> &files) {
    std::vector<std::string> names;
    for (const auto &f : files) {
        std::string n = fs::path(f).stem().string(), base = n;
        for (int k = 2; std::find(names.begin(), names.end(), n) != names.end(); k++)
            n = base + "_" + std::to_string(k);
        names.push_back(n);
    }
    return names;
}

std::pair<int, int> parse_size(const std::string &s) {
    int w = 0, h = 0;
    char extra = 0;
    if (std::sscanf(s.c_str(), "%dx%d%c", &w, &h, &extra) != 2 || w < 1 || h < 1 || w > 16384 || h > 16384)
        usage_error("--size must be WIDTHxHEIGHT, e.g. 1024x768 (each 1 to 16384), not \"" + s + "\"");
    return {w, h};
}

// --shape name=E0xE1x...: the extents of buffer Inputs and Outputs.
std::map<std::string, std::vector<int>> parse_shapes(const Options &o, const kiln::GeneratorBase &probe) {
    std::map<std::string, std::vector<int>> shapes;
    for (const std::string &text : o.shapes) {
        size_t eq = text.find('=');
        if (eq == std::string::npos || eq == 0) usage_error("--shape takes name=E0xE1x..., not \"" + text + "\"");
        std::string name = text.substr(0, eq), rest = text.substr(eq + 1);
        std::optional<kiln::Argument> arg;
        std::string names;
        for (const auto *in : probe.inputs()) {
            if (!in->argument().is_buffer) continue;
            names += (names.empty() ? "" : ", ") + in->name();
            if (in->name() == name) arg = in->argument();
        }
        for (const auto *out : probe.outputs()) {
            names += (names.empty() ? "" : ", ") + out->name();
            if (out->name() == name) arg = out->argument();
        }
        if (!arg) usage_error("--shape " + text + ": generator " + o.generator + " has no buffer Input or Output '" + name + "'; it has: " + names);
        std::vector<int> extents;
        size_t pos = 0;
        while (pos <= rest.size()) {
            size_t x = rest.find('x', pos);
            std::string part = rest.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
            int v = 0;
            auto r = std::from_chars(part.data(), part.data() + part.size(), v);
            if (part.empty() || r.ec != std::errc() || r.ptr != part.data() + part.size() || v < 1 || v > (1 << 24))
                usage_error("--shape " + text + ": extents are positive integers separated by 'x', e.g. " + name + "=64x32");
            extents.push_back(v);
            if (x == std::string::npos) break;
            pos = x + 1;
        }
        if ((int)extents.size() != arg->dimensions)
            usage_error("--shape " + text + ": '" + name + "' has " + std::to_string(arg->dimensions) +
                        (arg->dimensions == 1 ? " dimension, so give 1 extent" : " dimensions, so give " + std::to_string(arg->dimensions) + " extents"));
        shapes[name] = extents;
    }
    return shapes;
}

// Split --param values between GeneratorParams and scalar Inputs.
void classify_params(const Options &o, kiln::GeneratorBase &probe, Setup &s) {
    for (const std::string &p : o.params) {
        size_t eq = p.find('=');
        if (eq == std::string::npos || eq == 0) usage_error("--param takes name=value, not \"" + p + "\"");
        std::string name = p.substr(0, eq), value = p.substr(eq + 1);
        bool found = false;
        for (const auto *gp : probe.params()) found |= gp->name() == name;
        if (found) {
            s.generator_params.push_back(p);
            continue;
        }
        for (const auto *in : probe.inputs()) found |= in->name() == name && !in->argument().is_buffer;
        if (found) {
            s.scalars.emplace_back(name, value);
            continue;
        }
        std::string names;
        for (const auto *gp : probe.params()) names += (names.empty() ? "" : ", ") + gp->name();
        for (const auto *in : probe.inputs())
            if (!in->argument().is_buffer) names += (names.empty() ? "" : ", ") + in->name();
        usage_error("generator " + o.generator + " has no GeneratorParam or scalar Input '" + name + "'" +
                    (names.empty() ? "; it takes none" : "; it has: " + names));
    }
}

// Set the scalar Inputs given with --param.
void set_scalars(const kiln::GeneratorBase &g, const std::vector<std::pair<std::string, std::string>> &scalars) {
    for (const auto &[name, value] : scalars)
        for (const auto *in : g.inputs())
            if (in->name() == name && !kiln_lab::set_scalar(*in, value))
                usage_error("--param " + name + "=" + value + ": not a value of Input '" + name + "' (" +
                            in->describe() + ")");
}

// The input image (PNG or synthetic), each buffer Input's data, the output
// shapes and the report's sizes.
Setup make_setup(const Options &o) {
    Setup s;
    auto probe = kiln::GeneratorRegistry::create(o.generator);
    classify_params(o, *probe, s);
    probe->set_generator_params(s.generator_params);
    set_scalars(*probe, s.scalars);  // to reject a bad value before anything runs

    Buffer<float, 3> image;
    if (!o.input.empty()) {
        Buffer<void, 3> png = kiln_apps::load_png(o.input);
        s.png_bits = png.type().bits;
        image = kiln_apps::to_float(png);
        static const char *const kKinds[] = {"", "gray", "gray+alpha", "RGB", "RGBA"};
        s.description = o.input + " (" + std::to_string(image.width()) + "x" + std::to_string(image.height()) + " " +
                        kKinds[image.channels()] + ", " + std::to_string(s.png_bits) + "-bit)";
        if (!o.size.empty()) {
            auto [w, h] = parse_size(o.size);
            image = kiln_apps::mirror_tile(image, w, h);
            s.description += " tiled to " + o.size;
        }
    } else {
        auto [w, h] = parse_size(o.size.empty() ? "1024x1024" : o.size);
        image = kiln_apps::synthetic_photo(w, h, 3);
        s.description = "a synthetic " + std::to_string(w) + "x" + std::to_string(h) + " RGB image";
    }
    const int w = image.width(), h = image.height();
    s.size = std::to_string(w) + "x" + std::to_string(h);
    const std::map<std::string, std::vector<int>> shapes = parse_shapes(o, *probe);
    auto shape_text = [](const std::vector<int> &e) {
        std::string t;
        for (int v : e) t += (t.empty() ? "" : "x") + std::to_string(v);
        return t;
    };

    uint32_t seed = 0;
    bool image_used = false;
    std::string inputs_text;
    for (const auto *in : probe->inputs()) {
        kiln::Argument a = in->argument();
        if (!a.is_buffer) continue;
        seed++;
        if (auto it = shapes.find(a.name); it != shapes.end()) {
            // A tensor, not an image: reproducible random values.
            s.inputs[a.name] = kiln_lab::random_buffer(kiln::to_halide_type(a.type), it->second, seed);
            s.sizes[a.name] = it->second;
            inputs_text += "\n  input  " + a.name + ": " + a.type.to_string() + " " + shape_text(it->second) + " (random)";
            continue;
        }
        image_used = true;
        if (a.dimensions < 1 || a.dimensions > 3)
            usage_error("Input '" + a.name + "' has " + std::to_string(a.dimensions) +
                        " dimensions; kiln-lab feeds images to 1-D (x), 2-D (x, y) and 3-D (x, y, c) inputs only; "
                        "give it random values of a shape with --shape " + a.name + "=...");
        // 1-D inputs (a per-column vector: a bias, a scale) get the first row
        // of the luma, 2-D inputs the luma, 3-D inputs RGB.
        Buffer<float, 3> fitted = kiln_apps::with_channels(image, a.dimensions == 3 ? 3 : 1);
        s.inputs[a.name] = kiln_lab::from_unit_float(fitted, kiln::to_halide_type(a.type), a.dimensions);
        std::vector<int> extents = {w};
        if (a.dimensions >= 2) extents.push_back(h);
        if (a.dimensions == 3) extents.push_back(3);
        s.sizes[a.name] = extents;
        static const char *const kShapes[] = {"", " (the first row of the luma)", " (luma)", "x3 (RGB)"};
        inputs_text += "\n  input  " + a.name + ": " + a.type.to_string() + " " + std::to_string(w) +
                       (a.dimensions >= 2 ? "x" + std::to_string(h) : "") + kShapes[a.dimensions];
    }
    for (const auto *out : probe->outputs()) {
        kiln::Argument a = out->argument();
        if (a.dimensions < 1 || (a.dimensions > 3 && !shapes.count(a.name)))
            usage_error("Output '" + a.name + "' has " + std::to_string(a.dimensions) +
                        " dimensions; kiln-lab shapes 1-D (x: a row, e.g. a bias's gradient), 2-D and 3-D "
                        "outputs like the image; give its extents with --shape " + a.name + "=...");
        std::vector<int> extents = {w};
        if (a.dimensions >= 2) extents.push_back(h);
        if (a.dimensions == 3) extents.push_back(3);
        if (auto it = shapes.find(a.name); it != shapes.end()) extents = it->second;
        s.outputs.push_back(a);
        s.output_extents.push_back(extents);
        s.sizes[a.name] = extents;
    }
    if (!image_used) {  // every input is random: the outputs' shapes describe the run
        s.description = "random inputs";
        s.size = shape_text(s.output_extents.at(0));
        s.png_bits = 0;
    }
    s.description += inputs_text;
    return s;
}

// Buffers for every output of the generator at this run's sizes, and their
// halide_buffer_t pointers (into `outs`, which must not grow afterwards).
std::vector<halide_buffer_t *> make_outputs(const Setup &s, std::vector<Halide::Runtime::Buffer<void>> &outs) {
    for (size_t k = 0; k < s.outputs.size(); k++)
        outs.emplace_back(kiln::to_halide_type(s.outputs[k].type), s.output_extents[k]);
    std::vector<halide_buffer_t *> raw;
    for (auto &b : outs) raw.push_back(b.raw_buffer());
    return raw;
}

// The best of o.runs runs of a compiled pipeline, by o's clock (ms).
double best_of_runs(const Options &o, kiln::Pipeline &p, const std::vector<halide_buffer_t *> &raw,
                    const kiln::Target &target, Progress &progress, const std::string &what) {
    double best = std::numeric_limits<double>::infinity();
    for (int i = 0; i < o.runs; i++) {
        progress.show(what + ": run " + std::to_string(i + 1) + "/" + std::to_string(o.runs), false);
        auto t0 = std::chrono::steady_clock::now();
        double c0 = cpu_ms();
        p.realize_raw(raw, target);
        best = std::min(best, o.cpu_time ? cpu_ms() - c0 : ms_since(t0));
    }
    return best;
}

// A backward generator's schedule that saves forward Funcs (save()): its
// forward pass (forward_with_residuals(), scheduled by the file's [forward]
// section) run into buffers sized for this run, bound to the saved Funcs'
// buffers so that the backward kernel reads what a training step would
// give it; timed like the rows, into r.forward_ms. Nothing if it saves none.
// Adds the saved buffers to `sizes` and to the backward kernel's `args`
// (after its inputs, as kiln-gen's signature has them).
void run_forward_pass(const Options &o, const Setup &s, kiln::GeneratorBase &g, const kiln::Pipeline &p,
                      const kiln::ScheduleFile *file, const kiln::Target &target, Progress &progress,
                      const std::string &what, Outcome &r, std::map<std::string, std::vector<int>> &sizes,
                      std::vector<kiln::Argument> &args) {
    if (g.differentiated().empty()) return;
    for (const auto &[f, image] : g.adjoint_images())
        if (s.sizes.count(image)) sizes[f] = s.sizes.at(image);
    std::vector<kiln::SavedBuffer> saved = kiln::saved_buffers(g.differentiated(), p.outputs(), sizes, target);
    if (saved.empty()) return;
    kiln::Pipeline forward = kiln::forward_with_residuals(g.differentiated(), p.outputs());
    if (file) forward = file->schedule_forward(forward, target);
    std::map<std::string, size_t> index;  // buffer name -> position among the forward pass's outputs
    for (const kiln::Func &f : g.differentiated()) {
        if (!sizes.count(f.name()))
            throw std::runtime_error("the forward pass's output " + f.name() +
                                     " has no size here (its adjoint is not an input image); kiln-lab cannot "
                                     "run the forward pass that writes what this schedule saves");
        index[f.name()] = r.forward_buffers.size();
        r.forward_buffers.emplace_back(kiln::to_halide_type(f.type()), sizes.at(f.name()));
    }
    for (const kiln::SavedBuffer &b : saved) {
        const std::string name = b.buffer.name();
        if (!b.forward_output) {
            if (b.extents.empty())
                throw std::runtime_error("the size of " + name + ", which this schedule saves of " + b.func +
                                         ", is not constant at this run's sizes; kiln-lab cannot allocate it");
            index[name] = r.forward_buffers.size();
            r.forward_buffers.emplace_back(kiln::to_halide_type(b.buffer.type()), b.extents);
            sizes[name] = b.extents;
        }
        r.saved.push_back(b.func + (name == b.func ? "" : " (as " + name + ")"));
        args.insert(args.end() - (std::ptrdiff_t)s.outputs.size(),
                    kiln::Argument{name, true, b.buffer.type(), b.buffer.dimensions()});
    }
    std::vector<halide_buffer_t *> raw;
    for (auto &b : r.forward_buffers) raw.push_back(b.raw_buffer());
    for (kiln::SavedBuffer &b : saved)
        b.buffer.set(r.forward_buffers[index.at(b.forward_output ? b.func : b.buffer.name())]);
    progress.show(what + ": forward pass, JIT compile + first run...");
    forward.realize_raw(raw, target);
    r.forward_ms = best_of_runs(o, forward, raw, target, progress, what + ": forward pass");
}

// Build, schedule, bind, compile and time one schedule.
Outcome run_schedule(const Options &o, const Setup &s, const std::string &file, const std::string &name,
                     const kiln::Target &target, Progress &progress, const std::string &step, std::string &html) {
    Outcome r;
    r.name = name;
    r.file = file;
    auto g = kiln::GeneratorRegistry::create(o.generator);
    g->set_generator_params(s.generator_params);
    kiln::Pipeline p = g->build_pipeline();
    for (const auto *in : g->inputs())
        if (in->argument().is_buffer) kiln_lab::image_param(*in).set(s.inputs.at(in->name()));
    set_scalars(*g, s.scalars);
    if (file == "auto") {  // --auto: chosen for this run's sizes and scalar values
        progress.show(step + name + ": autoschedule...");
        // The schedule a build gets (kiln-gen -s auto), whatever the load.
        kiln::AutoscheduleOptions ao = kiln::AutoscheduleOptions::reproducible();
        ao.autotune = o.autotune;
        // Candidates are timed as the rows are: this run's inputs (bound
        // above), its clock and its number of runs.
        ao.measure = [&](const kiln::Pipeline &q) {
            std::vector<Halide::Runtime::Buffer<void>> outs;
            std::vector<halide_buffer_t *> raw = make_outputs(s, outs);
            kiln::Pipeline run = q;
            run.realize_raw(raw, target);  // compile, warm up
            return best_of_runs(o, run, raw, target, progress, step + name + ": candidate");
        };
        kiln::AutoscheduleResult a = kiln::autoschedule(p, target, s.sizes, ao);
        for (const kiln::AutotuneCandidate &c : a.autotuned)
            if (c.error.empty()) r.autotuned.push_back({c.predicted.total() / 1e6, c.measured_ms});
        r.skipped = a.skipped;
        kiln_lab::write_file((fs::path(o.out) / "auto.sched").string(), a.schedule_text);
        kiln_lab::write_file((fs::path(o.out) / "auto.autoschedule.txt").string(), a.explanation);
    }
    std::optional<kiln::ScheduleFile> sf;
    if (file != "auto") {
        sf = kiln::ScheduleFile::load(file);
        sf->apply(g->schedulable(), target);
    }
    std::map<std::string, std::vector<int>> sizes = s.sizes;  // and the saved buffers'
    std::vector<kiln::Argument> args = g->arguments();        // and theirs
    run_forward_pass(o, s, *g, p, sf ? &*sf : nullptr, target, progress, step + name, r, sizes, args);
    r.predicted_ms = kiln::predicted_time(p, target, sizes).total() / 1e6;
    std::vector<halide_buffer_t *> raw = make_outputs(s, r.outputs);

    progress.show(step + name + ": JIT compile + first run...");
    auto t0 = std::chrono::steady_clock::now();
    p.realize_raw(raw, target);
    r.first_ms = ms_since(t0);
    r.best_ms = best_of_runs(o, p, raw, target, progress, step + name);
    progress.show(step + name + ": fusion report and stmt_html...");
    r.report = p.report(sizes, target, o.cache_kb * 1024);
    std::string fn = o.generator + "_" + name;
    std::replace_if(fn.begin(), fn.end(), [](char c) { return !std::isalnum((unsigned char)c) && c != '_'; }, '_');
    html = kiln::stmt_html(p, fn, args, sizes, target);
    return r;
}

int run(const Options &o) {
    if (o.list) {
        for (const auto &name : kiln::GeneratorRegistry::list())
            std::printf("%s", kiln::GeneratorRegistry::create(name)->describe().c_str());
        return 0;
    }
    if (o.generator.empty()) usage_error("name a generator (kiln-lab --list shows them)");
    if (o.autotune != 0 && !o.autoschedule)
        usage_error("--autotune " + std::to_string(o.autotune) + " tunes the auto row: add --auto");
    const kiln::Target target(o.target);
    Setup s = make_setup(o);
    std::vector<std::string> files = schedule_files(o);
    if (o.autoschedule) files.push_back("auto");
    const std::vector<std::string> names = schedule_names(files);

    std::printf("kiln-lab: %s, %zu schedule%s, target %s, best of %d run%s\n", o.generator.c_str(), files.size(),
                files.size() == 1 ? "" : "s", target.to_string().c_str(), o.runs, o.runs == 1 ? "" : "s");
    for (const auto &p : o.params) std::printf("  param  %s\n", p.c_str());
    std::printf("  on %s\n\n", s.description.c_str());
    std::fflush(stdout);

    // A schedule that does not apply or whose kernel rejects the buffers is
    // reported and skipped; the others still run.
    fs::create_directories(o.out);
    Progress progress;
    std::vector<Outcome> results;
    for (size_t i = 0; i < files.size(); i++) {
        std::string step = "[" + std::to_string(i + 1) + "/" + std::to_string(files.size()) + "] ";
        std::string html;
        try {
            results.push_back(run_schedule(o, s, files[i], names[i], target, progress, step, html));
            kiln_lab::write_file((fs::path(o.out) / (names[i] + ".html")).string(), html);
        } catch (const kiln::InternalError &) {
            throw;
        } catch (const std::exception &e) {
            Outcome failed;
            failed.name = names[i];
            failed.file = files[i];
            failed.error = e.what();
            results.push_back(failed);
        }
    }
    progress.clear();
    auto ref = std::find_if(results.begin(), results.end(), [](const Outcome &r) { return r.error.empty(); });

    // Every output against the reference's.
    std::vector<std::string> problems;
    for (Outcome &r : results) {
        if (!r.error.empty()) {
            problems.push_back("schedule '" + r.name + "' failed: " + r.error);
            continue;
        }
        for (size_t k = 0; k < r.outputs.size(); k++) {
            r.max_diff.push_back(kiln_lab::max_abs_diff(r.outputs[k], ref->outputs[k]));
            if (!(r.max_diff.back() <= o.tolerance))
                problems.push_back("MISMATCH: schedule '" + r.name + "': output '" + s.outputs[k].name +
                                   "' differs from '" + ref->name + "' by up to " + std::to_string(r.max_diff.back()) +
                                   " (tolerance " + std::to_string(o.tolerance) + ")");
        }
    }
    std::fflush(stdout);
    if (ref == results.end()) {
        for (const auto &p : problems) std::fprintf(stderr, "kiln-lab: %s\n", p.c_str());
        throw std::runtime_error("no schedule ran");
    }
    std::printf("%s", kiln_lab::results_table(results, *ref, o.cpu_time ? "cpu ms" : "time ms").c_str());
    std::printf("\nmemory MB: traffic to and from memory in the fusion report's model (allocations of at most\n"
                "%lld KiB stay in cache); saved MB: against the report's baseline, this schedule with every\n"
                "Func it computes moved to compute_root.\n",
                (long long)o.cache_kb);
    double rho = kiln_lab::rank_correlation(results);
    if (!std::isnan(rho))
        std::printf("model ms: the autoscheduler's cost model (docs/autoschedule.md); rank correlation with the "
                    "measured times: %.2f\n",
                    rho);
    for (const Outcome &r : results) {
        if (r.autotuned.size() < 3) continue;
        double tuned = kiln_lab::rank_correlation(r.autotuned);
        char figure[64];
        std::snprintf(figure, sizeof(figure), "%.2f", tuned);
        std::printf("autotune: %zu candidates of the auto row ran; rank correlation of their predicted and "
                    "measured times: %s\n",
                    r.autotuned.size(), std::isnan(tuned) ? "none (the same time predicted for all)" : figure);
    }
    for (const Outcome &r : results)
        for (const std::string &why : r.skipped) std::printf("%s skipped: %s\n", r.name.c_str(), why.c_str());
    for (const Outcome &r : results) {
        if (r.saved.empty() || !r.error.empty()) continue;
        std::string what;
        for (const std::string &f : r.saved) what += (what.empty() ? "" : ", ") + f;
        std::printf("%s saves %s: its row times the backward kernel reading them; the forward pass writing them "
                    "took %.3f %s\n",
                    r.name.c_str(), what.c_str(), r.forward_ms, o.cpu_time ? "cpu ms" : "ms");
    }
    if (o.autoschedule) std::printf("auto: the schedule and why it was chosen are in %s/auto.sched and "
                                    "auto.autoschedule.txt\n", o.out.c_str());
    kiln_lab::write_results(o, s, results, *ref, target);

    if (!problems.empty()) {
        std::fflush(stdout);
        for (const auto &p : problems) std::fprintf(stderr, "kiln-lab: %s\n", p.c_str());
        return 2;
    }
    std::printf("all schedules agree with %s (max abs diff <= %g)\n", ref->name.c_str(), o.tolerance);
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    Options o;
    CLI::App app{"kiln-lab: run a generator under several schedules on one image; time, check and compare them"};
    app.add_option("generator", o.generator, "the generator (--list shows them)");
    app.add_option("--schedule,-s", o.schedules,
                   "schedule files (default: every " KILN_LAB_SCHEDULE_DIR "/<generator>/*.sched, unfused first)")
        ->check(CLI::ExistingFile);
    app.add_option("--input,-i", o.input, "a PNG input (gray, RGB or RGBA; 8 or 16-bit)");
    app.add_option("--size", o.size,
                   "WIDTHxHEIGHT: a synthetic image of this size, or with --input the PNG tiled (mirrored) to it "
                   "(default 1024x1024 without --input)");
    app.add_option("--param,-p", o.params, "name=value: a GeneratorParam or a scalar Input");
    app.add_option("--shape", o.shapes,
                   "name=E0xE1x...: the extents of a buffer Input (filled with random values instead of the "
                   "image) or Output (default: the image's size)");
    app.add_option("--target,-t", o.target, "the JIT target")->capture_default_str();
    app.add_option("--runs,-n", o.runs, "timed runs per schedule (the best is reported)")
        ->capture_default_str()
        ->check(CLI::Range(1, 100000));
    app.add_option("--out,-o", o.out, "where to write report.json, chart.svg, the pages and images")
        ->capture_default_str();
    app.add_option("--tolerance", o.tolerance, "largest max-abs-difference allowed between schedules' outputs")
        ->capture_default_str();
    app.add_option("--cache-kb", o.cache_kb, "the report's cache size: smaller allocations move no memory")
        ->capture_default_str()
        ->check(CLI::Range(int64_t(1), int64_t(1) << 30));
    app.add_flag("--cpu-time", o.cpu_time,
                 "time runs by the process's CPU time (all threads) instead of wall-clock time: steadier on a "
                 "busy machine; with KILN_NUM_THREADS=1 it is the kernel's own time");
    app.add_flag("--auto", o.autoschedule,
                 "add a row for the schedule kiln::autoschedule chooses for these sizes (docs/autoschedule.md)");
    app.add_option("--autotune", o.autotune,
                   "with --auto: run the N best candidate schedules by predicted cost (on random inputs of these "
                   "sizes) and keep the fastest; the explanation lists them with their times")
        ->type_name("N");
    app.add_flag("--list", o.list, "list the generators with their params, inputs and outputs");
    CLI11_PARSE(app, argc, argv);
    try {
        return run(o);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "\nkiln-lab: error: %s\n", e.what());
        return 1;
    }
}
