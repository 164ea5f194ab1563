// Schedule files (.sched): a text form of the schedule API, applied to a
// pipeline by Func and Var names.
//
//   # schedules/blur3x3/host_tiled.sched
//   blur_y: tile(x, y, xi, yi, 256, 32) vectorize(xi, natural_vector_size) parallel(y)
//   blur_x: compute_at(blur_y, x) vectorize(x, natural_vector_size)
//   hist.update(0): parallel(y)
//   input.in(blur_x): compute_at(blur_y, x)         # a wrapper (Func::in, ImageParam::in)
//   z2: compute_with(z1, y)
//   s2.update(0): compute_with(s1.update(0), r.x)   # into another Func's update stage
//   out.specialize(in.width >= 16): vectorize(x, 16)  # run-time dispatch (Stage::specialize)
//   [forward]                                       # a backward generator's forward pass from here on
//   exps: compute_at(output, y) vectorize(x, 16)
//
// Every directive is the Func/Stage method of the same name with the same
// arguments; the grammar is in docs/schedule-language.md. Errors are
// CompileErrors of the form "file:line:col: what was expected / what is wrong".
//
//   ScheduleFile s = ScheduleFile::load("host_tiled.sched");   // syntax, directive names, argument counts
//   s.apply(Pipeline(blur_y));                                  // Func and loop names, then the C++ API's checks
#pragma once
#include <string>
#include <vector>

#include "Pipeline.h"
#include "Target.h"

namespace kiln {

// One directive: name(args...), arguments kept as written (identifiers,
// integers, symbolic values like natural_vector_size, TailStrategy names),
// without spaces: "natural_vector_size*2".
struct ScheduleDirective {
    std::string name;
    std::vector<std::string> args;
    int line = 0, col = 0;
    // Where each argument starts (same length as args).
    std::vector<int> arg_lines, arg_cols;
};

// The directives of one Func (stage -1) or one update stage (stage >= 0).
struct ScheduleStanza {
    std::string func;
    int stage = -1;  // -1: the Func itself (pure definition + compute/store); i: update(i)
    // "f.in(g, h):" schedules the wrapper f.in({g, h}) (made when applied);
    // "f.in():" the global wrapper f.in(). f may be an ImageParam.
    bool wrapper = false;
    std::vector<std::string> wrapper_of;
    // "f.clone_in(g, h):" schedules the clone f.clone_in({g, h}) instead (wrapper is also set).
    bool clone = false;
    // "f.specialize(COND):" (or "f.update(N).specialize(COND):") schedules
    // the specialization of the stage for COND, kept as canonical text
    // ("B.width >= natural_vector_size*2 && A.height >= 12"); "" for the
    // stage's own schedule.
    std::string condition;
    // "forward" for the stanzas after a "[forward]" line: they schedule the
    // forward pass of a backward generator that saves Funcs (its own copies
    // of the forward Funcs, see schedule_forward()); "" for the rest.
    std::string kernel;
    std::vector<ScheduleDirective> directives;
    int line = 0, col = 0;  // of the first header of this Func/stage
};

// Structural equality: names, stages and arguments; positions are ignored.
bool operator==(const ScheduleDirective &a, const ScheduleDirective &b);
bool operator==(const ScheduleStanza &a, const ScheduleStanza &b);
inline bool operator!=(const ScheduleDirective &a, const ScheduleDirective &b) { return !(a == b); }
inline bool operator!=(const ScheduleStanza &a, const ScheduleStanza &b) { return !(a == b); }

class ScheduleFile {
public:
    // Checks the syntax, the directive names, their argument counts and
    // kinds (name, integer, TailStrategy), and that compute/store/bound
    // directives are not in update stanzas. A Func or stage whose header
    // appears twice gets one stanza with the directives of both, in order.
    static ScheduleFile parse(const std::string &text, const std::string &filename = "<string>");
    static ScheduleFile load(const std::string &path);  // CompileError if unreadable

    const std::string &filename() const { return filename_; }
    const std::vector<ScheduleStanza> &stanzas() const { return stanzas_; }

    // Canonical text: one line per stanza, in file order; parse(print(s)) == s.
    std::string to_string() const;

    // Apply every directive to the pipeline's Funcs (Pipeline::functions()),
    // stanza by stanza in file order. Unknown Func or Var names are
    // CompileErrors at file:line:col that suggest the nearest existing name;
    // errors of the C++ API are re-thrown with the directive's position.
    // natural_vector_size is evaluated for `t`.
    // The stanzas of the "[forward]" section are not applied.
    void apply(const Pipeline &p, const Target &t = Target::host()) const;

    // The forward pass of a backward pipeline that saves Funcs
    // (forward_with_residuals(), Derivative.h), scheduled by the file's
    // "[forward]" section: copies of its Funcs, which keep the schedules
    // apply() gave them except where the section has a stanza: that stage
    // starts over from its definition (its loops unsplit, inlined, no
    // bounds; save() kept) and takes the stanza's directives. So a Func
    // both passes compute (a softmax's exponentials) is scheduled for each.
    // Without the section, `forward` itself.
    Pipeline schedule_forward(const Pipeline &forward, const Target &t = Target::host()) const;
    bool has_forward_section() const;

    bool operator==(const ScheduleFile &o) const { return stanzas_ == o.stanzas_; }
    bool operator!=(const ScheduleFile &o) const { return !(*this == o); }

private:
    std::string filename_;
    std::vector<ScheduleStanza> stanzas_;
};

}  // namespace kiln
