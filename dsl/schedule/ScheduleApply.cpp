// ScheduleFile::apply(): calls the schedule method of each directive on the
// pipeline's Func (or Stage, for `f.update(N):` stanzas), stanza by stanza in
// file order — exactly what the same calls written in C++ would do.
//
//   blur_y: split(x, xo, xi, 8)      ->  funcs.at("blur_y").split(Var("xo") ...)   (through Stage(f, 0))
//   hist.update(0): parallel(y)      ->  funcs.at("hist").update(0).parallel(Var("y"))
//   out.specialize(in.width >= 16): vectorize(x, 16)
//                                    ->  funcs.at("out").specialize(in.width() >= 16).vectorize(Var("x"), 16)
//
// Names resolve against the stage: a name that is a dimension of the
// stage's RDom (`r.x`, or `r` for a 1-D RDom) or a loop split from one is an
// RVar, any other name a Var. Before each call the loops it names are looked
// up, so that a CompileError of the C++ API (which lists the stage's loops)
// is re-thrown at the position of the unknown name with a "did you mean".
// compute_at/store_at name loops of another Func, which later stanzas may
// still create, so those names are checked after every directive is applied.
#include <algorithm>
#include <map>

#include "Directives.h"
#include "ScheduleOrigin.h"
#include "ScheduleSyntax.h"
#include "ir/Error.h"
#include "ir/Function.h"
#include "ir/Substitute.h"
#include "lower/RealizationOrder.h"
#include "lower/SavedResiduals.h"
#include "kiln/ScheduleFile.h"

namespace kiln {

using namespace internal;
using namespace internal::sched;

namespace {

// The schedule of stage `stage`, or of its specialization `spec` (>= 0).
const StageSchedule &schedule_of(const Func &f, int stage, int spec) {
    const Definition &d = f.contents()->stage(stage);
    return spec < 0 ? d.schedule : d.specializations[spec].schedule;
}

// Loops of stage `stage` (0: pure definition), outermost first.
std::vector<std::string> loops_of(const Func &f, int stage, int spec = -1) {
    std::vector<std::string> r;
    const auto &dims = schedule_of(f, stage, spec).dims;
    for (auto it = dims.rbegin(); it != dims.rend(); ++it) r.push_back(it->user_name);
    return r;
}

// Every loop of every stage of f, without repeats.
std::vector<std::string> all_loops_of(const Func &f) {
    std::vector<std::string> r;
    for (int s = 0; s < f.contents()->num_stages(); s++)
        for (const auto &l : loops_of(f, s))
            if (std::find(r.begin(), r.end(), l) == r.end()) r.push_back(l);
    return r;
}

// Was `name` a loop of the stage that a split or fuse has replaced?
bool replaced_loop(const Func &f, int stage, int spec, const std::string &name) {
    for (const auto &sp : schedule_of(f, stage, spec).splits) {
        std::vector<std::string> gone = {sp.old_var};
        if (sp.kind == Split::FuseVars) gone = {sp.inner, sp.outer};
        for (const auto &g : gone)
            if (g == name || last_component(g) == name) return true;
    }
    return false;
}

// Arguments of compute_at/store_at/compute_with: checked once every directive has run.
struct PendingLevel {
    std::string directive;
    Func func;
    Arg var;
    std::string site;  // func as written ("f", or "f.update(0)" for compute_with)
};

class Applier {
public:
    Applier(const std::string &file, const Pipeline &p, const Target &t) : file(file), target(t) {
        for (const auto &kv : p.functions()) {
            if (kv.second.contents()->is_image_wrapper) continue;  // always inlined, not the user's
            funcs.emplace(kv.first, kv.second);
            names.push_back(kv.first);
        }
        std::vector<std::shared_ptr<FunctionContents>> outs;
        for (const auto &o : p.outputs()) outs.push_back(o.contents());
        for (const auto &kv : find_parameters(find_user_functions(outs)))
            (kv.second->is_buffer ? images : scalars)[kv.first] = kv.second;
    }

    void stanza(const ScheduleStanza &s) {
        Func f = s.wrapper ? wrapper(s) : find_func(s.func, s.line, s.col, "");
        if (s.stage >= f.num_update_definitions()) {
            int n = f.num_update_definitions();
            error_at(file, s.line, s.col,
                     "Func " + f.name() + " has " + std::to_string(n) + " update definition" + (n == 1 ? "" : "s") +
                         ", so there is no " + f.name() + ".update(" + std::to_string(s.stage) + ")" +
                         (n == 1   ? "; use update(0)"
                          : n > 1  ? "; use update(0) to update(" + std::to_string(n - 1) + ")"
                                   : ""));
        }
        spec = s.condition.empty() ? -1 : specialization(f, s);
        for (const auto &d : s.directives) directive(f, s.stage + 1, d);
        spec = -1;
    }

    void check_pending_levels() const {
        for (const auto &p : pending) {
            std::vector<std::string> loops = all_loops_of(p.func);
            if (std::find(loops.begin(), loops.end(), p.var.name) != loops.end()) continue;
            std::string near = nearest(p.var.name, loops);
            error_at(file, p.var.line, p.var.col,
                     p.directive + "(" + p.site + ", " + p.var.name + "): " + p.func.name() +
                         " has no loop named " + p.var.name + (near.empty() ? "; its loops: " : "; did you mean '" + near + "'? Its loops: ") +
                         join(loops));
        }
    }

private:
    // The wrapper named by "f.in(g, ...):", made now (the same one on every apply).
    Func wrapper(const ScheduleStanza &s) {
        std::vector<Func> consumers;
        const std::string kind = s.clone ? "clone_in" : "in";
        for (const auto &c : s.wrapper_of)
            consumers.push_back(find_func(c, s.line, s.col, s.func + "." + kind + "(...): "));
        auto img = images.find(s.func);
        if (img != images.end() && s.clone)
            error_at(file, s.line, s.col,
                     s.func + " is an input image, which has no clone_in(); stage it with '" + s.func + ".in(" +
                         join(s.wrapper_of) + "):' instead");
        Func w;
        try {
            if (img != images.end()) w = ImageParam(img->second).in(consumers);
            else if (s.clone) w = Func(find_func(s.func, s.line, s.col, "")).clone_in(consumers);
            else w = Func(find_func(s.func, s.line, s.col, "")).in(consumers);
        } catch (const CompileError &e) {
            error_at(file, s.line, s.col, e.what());
        }
        funcs.emplace(w.name(), w);
        names.push_back(w.name());
        // Later stanzas name the wrapper as docs/scheduling.md §7 spells it
        // (f_in, f_in_g_h); the Func itself may carry a numbered name when
        // the same pipeline was built before in this process.
        std::string as_written = s.func + "_" + kind;
        for (const auto &c : s.wrapper_of) as_written += "_" + c;
        if (as_written != w.name() && funcs.emplace(as_written, w).second) names.push_back(as_written);
        return w;
    }

    // The specialization of "f.specialize(COND):" (made now, or found if an
    // equal condition made it before): its index in the stage's list.
    int specialization(const Func &f, const ScheduleStanza &s) {
        Expr c = condition(f, s);
        const int stage = s.stage + 1;
        try {
            Stage(f.contents(), stage).specialize(c);
        } catch (const CompileError &e) {
            error_at(file, s.line, s.col, e.what());
        }
        const auto &list = f.contents()->stage(stage).specializations;
        for (size_t i = 0; i < list.size(); i++)
            if (equal(list[i].condition, c)) return (int)i;
        internal_error << "ScheduleFile::apply: the specialization of " << f.name() << " for " << s.condition
                       << " was not made";
        return -1;
    }

    // The condition text (see ScheduleParser.cpp) as an Expr: comparisons of
    // integers (natural_vector_size of the Func's type), an input's
    // width/height/channels and scalar Params, joined by &&.
    Expr condition(const Func &f, const ScheduleStanza &s) {
        std::vector<Token> toks = lex(s.condition, file, s.line, s.col);
        Type ft = f.types()[0];
        for (const Type &t : f.types()) ft = t.bits() > ft.bits() ? t : ft;
        Expr all;
        for (size_t pos = 0;;) {
            Expr a = operand(parse_arg(toks, pos, file, "specialize"), ft, s);
            const std::string op = toks[pos++].text;
            Expr b = operand(parse_arg(toks, pos, file, "specialize"), ft, s);
            Expr c = op == ">=" ? a >= b : op == ">" ? a > b : op == "<=" ? a <= b : op == "<" ? a < b
                   : op == "==" ? a == b : a != b;
            all = all.defined() ? all && c : c;
            if (toks[pos].text != "&&") return all;
            pos++;
        }
    }

    Expr operand(const Arg &a, Type ft, const ScheduleStanza &s) {
        if (!a.is_name()) return Expr(evaluate(a, target, ft, file));
        const size_t dot = a.name.rfind('.');
        auto img = images.find(a.name.substr(0, dot));
        if (dot != std::string::npos && img != images.end()) {
            const std::string field = a.name.substr(dot + 1);
            const int d = field == "width" ? 0 : field == "height" ? 1 : field == "channels" ? 2 : -1;
            if (d >= 0 && d < img->second->dimensions) return ImageParam(img->second).dim(d).extent();
        }
        auto p = scalars.find(a.name);
        if (p != scalars.end()) return param_variable(p->second, p->second->name, p->second->type);
        std::vector<std::string> known;
        for (const auto &kv : images)
            for (int d = 0; d < std::min(kv.second->dimensions, 3); d++)
                known.push_back(kv.first + (d == 0 ? ".width" : d == 1 ? ".height" : ".channels"));
        for (const auto &kv : scalars) known.push_back(kv.first);
        std::string near = nearest(a.name, known);
        error_at(file, s.line, s.col,
                 s.func + ".specialize(" + s.condition + "): '" + a.name +
                     "' is neither an input's width, height or channels nor a scalar Param" +
                     (near.empty() ? "" : "; did you mean '" + near + "'?") +
                     " A specialization is chosen once per run, from: " + (known.empty() ? "(nothing)" : join(known)));
    }

    const std::string &file;
    const Target &target;
    int spec = -1;  // the specialization the current stanza schedules
    std::map<std::string, std::shared_ptr<ParameterContents>> images, scalars;
    std::map<std::string, Func> funcs;
    std::vector<std::string> names;
    std::vector<PendingLevel> pending;

    const Func &find_func(const std::string &name, int line, int col, const std::string &context) {
        // Funcs given one name are blur, blur$1, ... (lower/UniqueNames.h);
        // blur$0 names the first, and plain blur is ambiguous.
        bool first = name.size() > 2 && name.compare(name.size() - 2, 2, "$0") == 0;
        std::string base = first ? name.substr(0, name.size() - 2) : name;
        std::vector<std::string> same;
        for (const auto &n : names)
            if (n.compare(0, base.size() + 1, base + "$") == 0) same.push_back(n);
        auto it = same.empty() && first ? funcs.end() : funcs.find(base);
        if (it != funcs.end() && !same.empty() && !first)
            error_at(file, line, col,
                     context + "'" + name + "' is ambiguous: " + std::to_string(same.size() + 1) +
                         " Funcs of the pipeline were given that name, and are now " + name + "$0 (shown as " +
                         name + ") and " + join(same) + ", in the order they were made; name one of them");
        if (it != funcs.end()) return it->second;
        std::string near = nearest(name, names);
        error_at(file, line, col,
                 context + "no Func named '" + name + "' in the pipeline" +
                     (near.empty() ? "" : "; did you mean '" + near + "'?") + " (its Funcs: " + join(names) + ")");
    }

    // The Var or RVar that `a` names in stage `stage` of f.
    VarOrRVar loop(const Func &f, int stage, const Arg &a) const {
        const Definition &def = f.contents()->stage(stage);
        std::string n = a.name;
        bool rvar = false;
        if (def.rdom) {
            if (n == def.rdom->name && def.rdom->vars.size() == 1) n = def.rdom->vars[0].name;
            for (const auto &v : def.rdom->vars) rvar |= v.name == n;
        }
        for (const auto &d : schedule_of(f, stage, spec).dims) rvar |= d.user_name == n && d.is_rvar;
        return VarOrRVar(n, rvar);
    }

    // Is `name` a current loop of the stage? If not, a "did you mean" when it looks like a typo.
    bool is_loop(const Func &f, int stage, const std::string &name, std::string *hint) const {
        std::vector<std::string> loops = loops_of(f, stage, spec);
        if (std::find(loops.begin(), loops.end(), name) != loops.end()) return true;
        std::string near = replaced_loop(f, stage, spec, name) ? "" : nearest(name, loops);
        if (!near.empty()) *hint = "; did you mean '" + near + "'?";
        return false;
    }

    // The same for a dimension of the Func (bound, fold_storage).
    static bool is_dimension(const Func &f, const std::string &name, std::string *hint) {
        std::vector<std::string> dims;
        for (const auto &v : f.args()) dims.push_back(v.name());
        if (std::find(dims.begin(), dims.end(), name) != dims.end()) return true;
        std::string near = nearest(name, dims);
        if (!near.empty()) *hint = "; did you mean '" + near + "'?";
        return false;
    }

    void directive(Func f, int stage, const ScheduleDirective &d) {
        const Directive *info = find_directive(d.name);
        std::vector<Parameter> params;
        if (!info || !params_for(*info, d.args.size(), &params))  // a ScheduleFile is made by parse(), which checks
            internal_error << "ScheduleFile::apply: directive " << d.name << " with " << d.args.size()
                           << " arguments did not pass the parser";
        DirectiveCall c{f, Stage(f.contents(), stage, spec)};
        // natural_vector_size of a Tuple: that of its widest element.
        Type ft = f.types()[0];
        for (const Type &t : f.types()) ft = t.bits() > ft.bits() ? t : ft;
        for (size_t i = 0; i < d.args.size(); i++) {
            bool placed = i < d.arg_lines.size() && i < d.arg_cols.size();  // hand-built directives may lack them
            int line = placed ? d.arg_lines[i] : d.line, col = placed ? d.arg_cols[i] : d.col;
            c.args.push_back(parse_arg_text(d.args[i], file, line, col));
            c.ints.push_back(c.args[i].is_name() ? Expr() : Expr(evaluate(c.args[i], target, ft, file)));
            c.loops.push_back(loop(f, stage, c.args[i]));
        }
        c.define = [&](const Func &made) {
            funcs.emplace(made.name(), made);
            names.push_back(made.name());
        };
        // The first argument naming no current loop or dimension: errors of the call point at it.
        std::string hint;
        const Arg *bad = nullptr;
        for (size_t i = 0; i < params.size(); i++) {
            const Arg &a = c.args[i];
            std::string h;
            if (params[i].slot == Slot::Loop && !bad && !is_loop(f, stage, c.loops[i].name(), &h)) bad = &a;
            if (params[i].slot == Slot::Dim && !bad && !is_dimension(f, a.name, &h)) bad = &a;
            if (bad == &a) hint = h;
            if (params[i].slot == Slot::Func || params[i].slot == Slot::Stage)
                c.site = &find_func(a.name, a.line, a.col, d.name + ": ");
            if (params[i].slot == Slot::Stage && a.stage > c.site->num_update_definitions()) {
                int n = c.site->num_update_definitions();
                error_at(file, a.line, a.col,
                         d.name + ": Func " + a.name + " has " + std::to_string(n) + " update definition" +
                             (n == 1 ? "" : "s") + ", so there is no stage " + a.text +
                             (n == 0 ? "; name the Func " + a.name + " (its pure definition)"
                                     : "; use " + a.name + " (its pure definition) or " + a.name + ".update(0)" +
                                           (n > 1 ? " to " + a.name + ".update(" + std::to_string(n - 1) + ")" : "")));
            }
            if (params[i].slot == Slot::Stage) c.site_stage = a.stage;
            if (params[i].slot == Slot::Buffer) {
                auto img = images.find(a.name);
                if (img != images.end()) c.image = img->second;
                else c.site = &find_func(a.name, a.line, a.col, d.name + ": no input image and ");
            }
            if (params[i].slot == Slot::FuncLoop) {
                bool rvar = false;
                for (int s = 0; s < c.site->contents()->num_stages(); s++)
                    for (const auto &dim : c.site->contents()->stage(s).schedule.dims)
                        rvar |= dim.user_name == a.name && dim.is_rvar;
                c.site_loops.push_back(VarOrRVar(a.name, rvar));
                pending.push_back({d.name, *c.site, a, c.args[i - 1].text});
            }
            if (params[i].slot == Slot::NewFunc && (funcs.count(a.name) || a.name.find('.') != std::string::npos))
                error_at(file, a.line, a.col,
                         "In schedule of " + f.contents()->stage_name(stage) + ": " + d.name +
                             ": the intermediate needs a new Func name without dots; '" + a.name + "' is " +
                             (funcs.count(a.name) ? "already a Func of the pipeline" : "dotted") + "; name it e.g. " +
                             f.name() + "_intm");
        }

        auto loop_types = [&] {
            std::map<std::string, ForType> t;
            for (const auto &dim : schedule_of(f, stage, spec).dims) t[dim.var] = dim.for_type;
            return t;
        };
        std::map<std::string, ForType> types_before = loop_types();
        try {
            info->apply(c);
        } catch (const CompileError &e) {
            int line = bad ? bad->line : d.line, col = bad ? bad->col : d.col;
            error_at(file, line, col, e.what() + hint);
        }
        // Lowering checks the compute and store levels and the folds; its errors point here.
        std::string at = file + ":" + std::to_string(d.line) + ":" + std::to_string(d.col);
        if (info->origin) {
            std::string kind = info->origin;
            record_schedule_origin(*f.contents(), kind == "fold" ? kind + "." + c.args[0].name : kind, at);
        }
        // ... and so do its errors about the loops this directive made vectorized, unrolled or parallel.
        for (const auto &t : loop_types()) {
            auto before = types_before.find(t.first);
            if (t.second != ForType::Serial && (before == types_before.end() || before->second != t.second))
                record_loop_origin(*f.contents(), stage, t.first, at);
        }
    }
};

}  // namespace

void ScheduleFile::apply(const Pipeline &p, const Target &t) const {
    Applier a(filename_, p, t);
    for (const auto &s : stanzas_)
        if (s.kernel.empty()) a.stanza(s);
    a.check_pending_levels();
}

bool ScheduleFile::has_forward_section() const {
    return std::any_of(stanzas_.begin(), stanzas_.end(), [](const ScheduleStanza &s) { return s.kernel == "forward"; });
}

Pipeline ScheduleFile::schedule_forward(const Pipeline &forward, const Target &t) const {
    if (!has_forward_section()) return forward;
    Pipeline copies(internal::copy_pipeline(forward.outputs()));
    // A stage the section names starts over from its definition's loops and
    // the defaults (inlined, no bounds, ...): the section replaces the
    // schedule of the stanzas before it there, keeping only save().
    std::map<std::string, Func> funcs = copies.functions();
    for (const auto &s : stanzas_) {
        auto it = funcs.find(s.func);
        if (s.kernel != "forward" || s.wrapper || !s.condition.empty() || it == funcs.end()) continue;
        internal::FunctionContents &f = *it->second.contents();
        const int stage = s.stage + 1;
        if (stage >= f.num_stages()) continue;  // apply() names the missing update
        f.stage(stage).schedule = internal::StageSchedule();
        f.stage(stage).schedule.dims = f.definition_dims(stage);
        f.stage(stage).specializations.clear();
        f.stage(stage).specialize_fail.clear();
        if (stage > 0) continue;
        internal::FuncSchedule fresh;
        fresh.residual = f.schedule.residual;
        fresh.residual_buffer = f.schedule.residual_buffer;
        fresh.wrappers = f.schedule.wrappers;
        f.schedule = fresh;
    }
    Applier a(filename_, copies, t);
    for (const auto &s : stanzas_)
        if (s.kernel == "forward") a.stanza(s);
    a.check_pending_levels();
    return copies;
}

}  // namespace kiln
