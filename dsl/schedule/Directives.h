// The table of schedule directives (Directives.cpp): for each one its name,
// scope, parameter lists with the kind of each argument, how it is applied
// through the C++ API, and its documentation line. The .sched parser checks
// calls against it, ScheduleFile::apply() resolves and checks the arguments
// by their kinds and calls its apply function, and the error messages quote
// its usage. Adding a directive means: its C++ method, one row here, its
// lowering, tests and docs/scheduling.md.
//
//   {"fold_storage", Scope::Func, "fold_storage(var, factor[, fold_forward])",
//    {{{{"var", Slot::Dim}, {"factor", Slot::Int}, {"fold_forward", Slot::Bool}}, 2}}, ...}
//     "f: fold_storage(y, 4)" -> f.fold_storage(Var("y"), 4, true)
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "ScheduleSyntax.h"
#include "ir/Function.h"
#include "kiln/Func.h"

namespace kiln {
namespace internal {
namespace sched {

// What one argument of a directive is.
enum class Slot {
    Loop,      // a current loop of the stage
    Name,      // a name the directive gives (split's outer and inner)
    Int,       // an integer expression (ScheduleSyntax.h)
    Tail,      // a TailStrategy
    Root,      // the word root
    Func,      // a Func of the pipeline...
    Stage,     // ...or one of its stages: f (its pure definition) or f.update(N) (compute_with's parent)
    FuncLoop,  // ...and one of its loops, checked once every stanza is applied
    Dim,       // a dimension of the Func (a Var of its pure definition)
    Memory,    // GM, UB, L1, L0A, L0B or L0C
    Align,     // a LoopAlignStrategy
    Bool,      // true or false
    NewFunc,   // the name of a Func the directive makes (rfactor's intermediate)
    Buffer,    // a Func of the pipeline or an input image (prefetch)
    Prefetch,  // a PrefetchBoundStrategy
    Residual,  // whole, bits or none (save())
};

struct Parameter {
    const char *name;
    Slot slot;
};

// One accepted parameter list; those after the first `required` may be left out.
struct Form {
    std::vector<Parameter> params;
    size_t required;
};

enum class Scope {
    Stage,   // any stanza: the loops of a stage or of its specialization
    Update,  // update stanzas only (rfactor)
    Func,    // the Func's own stanza only: where it is computed and stored, its bounds
};

// A directive of a .sched file with its arguments resolved, ready to apply.
struct DirectiveCall {
    Func func;
    Stage stage;
    std::vector<Arg> args;
    std::vector<Expr> ints;        // the value of each integer argument
    std::vector<VarOrRVar> loops;  // each argument read as a loop of the stage
    const Func *site = nullptr;    // the Func a Func (or Buffer, or Stage) argument names
    int site_stage = 0;            // the stage of site a Stage argument names (0: the pure definition)
    std::shared_ptr<ParameterContents> image;  // the input image a Buffer argument names
    std::vector<VarOrRVar> site_loops;  // the FuncLoop argument as a loop of site (one or none)
    std::function<void(const Func &)> define;  // makes a new Func nameable by later stanzas

    TailStrategy tail(size_t i) const;
    size_t size() const { return args.size(); }
};

struct Directive {
    const char *name;
    Scope scope;
    const char *usage;
    std::vector<Form> forms;
    bool variadic;       // any number >= 2 of the first form's first parameter (reorder)
    const char *origin;  // the schedule_origin() kind it sets ("compute", "store", "fold"), or nullptr
    void (*apply)(DirectiveCall &);
    const char *doc;     // one line, as docs/scheduling.md describes it
    // Whether a Func's schedule has this directive where the NPU target
    // would not honour it; nullptr: it does. npu_reason says why, for the
    // error ("it lays out and sizes its buffers itself").
    bool (*ignored_by_npu)(const FunctionContents &) = nullptr;
    const char *npu_reason = nullptr;
};

const std::vector<Directive> &directives();
const Directive *find_directive(const std::string &name);
std::vector<std::string> directive_names();

// "no arguments", "1 argument", "3 or 4 arguments", "2 or more arguments".
std::string arity_text(const Directive &d);

// A CompileError naming the Func and the directive if f's schedule has one
// that the NPU target would silently ignore.
void check_npu_honours(const FunctionContents &f);

// The parameters of a call with n arguments, one per argument; false if no form takes n.
bool params_for(const Directive &d, size_t n, std::vector<Parameter> *params);

}  // namespace sched
}  // namespace internal
}  // namespace kiln
