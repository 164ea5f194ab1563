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

#include "ScheduleOrigin.h"
#include "ScheduleSyntax.h"
#include "ir/Error.h"
#include "ir/Function.h"
#include "ir/Substitute.h"
#include "lower/RealizationOrder.h"
#include "kiln/ScheduleFile.h"

namespace kiln {

using namespace internal;
using namespace internal::sched;

namespace {

std::string last_component(const std::string &n) {
    size_t p = n.rfind('.');
    return p == std::string::npos ? n : n.substr(p + 1);
}

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

// compute_*, store_*, fold_storage and bound schedule the Func, not one of its stages.
bool whole_func(const std::string &directive) {
    for (const char *n : {"compute_root", "compute_at", "compute_inline", "store_root", "store_at", "fold_storage",
                          "bound", "store_in", "double_buffer"})
        if (directive == n) return true;
    return false;
}

MemoryType memory_named(const std::string &n, const std::string &directive) {
    for (int m = 1; m <= (int)MemoryType::L0C; m++)
        if (n == to_string((MemoryType)m)) return (MemoryType)m;
    user_error << directive << "(" << n << "): unknown memory";
    return MemoryType::Auto;
}

TailStrategy tail_named(const std::string &n) {
    if (n == "GuardWithIf") return TailStrategy::GuardWithIf;
    if (n == "ShiftInwards") return TailStrategy::ShiftInwards;
    if (n == "RoundUp") return TailStrategy::RoundUp;
    return TailStrategy::Auto;
}

LoopAlignStrategy align_named(const std::vector<Arg> &a, const std::string &file) {
    if (a.size() < 3) return LoopAlignStrategy::Auto;
    for (auto s : {LoopAlignStrategy::AlignStart, LoopAlignStrategy::AlignEnd, LoopAlignStrategy::NoAlign,
                   LoopAlignStrategy::Auto})
        if (a[2].name == to_string(s)) return s;
    error_at(file, a[2].line, a[2].col,
             "argument 3 (align) of compute_with must be AlignStart, AlignEnd, NoAlign or Auto, found '" + a[2].text +
                 "'");
}

// The optional third argument of fold_storage: true (the default) or false.
bool fold_forward(const std::vector<Arg> &a, const std::string &file) {
    if (a.size() < 3 || a[2].name == "true") return true;
    if (a[2].name == "false") return false;
    error_at(file, a[2].line, a[2].col,
             "argument 3 (fold_forward) of fold_storage must be true or false, found '" + a[2].text + "'");
}

// Arguments of compute_at/store_at/compute_with: checked once every directive has run.
struct PendingLevel {
    std::string directive;
    Func func;
    Arg var;
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
                     p.directive + "(" + p.func.name() + ", " + p.var.name + "): " + p.func.name() +
                         " has no loop named " + p.var.name + (near.empty() ? "; its loops: " : "; did you mean '" + near + "'? Its loops: ") +
                         join(loops));
        }
    }

private:
    // The wrapper named by "f.in(g, ...):", made now (the same one on every apply).
    Func wrapper(const ScheduleStanza &s) {
        std::vector<Func> consumers;
        for (const auto &c : s.wrapper_of) consumers.push_back(find_func(c, s.line, s.col, s.func + ".in(...): "));
        Func w;
        try {
            auto img = images.find(s.func);
            if (img != images.end()) w = ImageParam(img->second).in(consumers);
            else w = Func(find_func(s.func, s.line, s.col, "")).in(consumers);
        } catch (const CompileError &e) {
            error_at(file, s.line, s.col, e.what());
        }
        funcs.emplace(w.name(), w);
        names.push_back(w.name());
        // Later stanzas name the wrapper as docs/scheduling.md §7 spells it
        // (f_in, f_in_g_h); the Func itself may carry a numbered name when
        // the same pipeline was built before in this process.
        std::string as_written = s.func + "_in";
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
        for (const Type &t : f.types()) ft = t.bits > ft.bits ? t : ft;
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
        auto it = funcs.find(name);
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

    // The first argument among `which` that is not a current loop of the
    // stage, with a "did you mean" when it looks like a typo.
    const Arg *unknown_loop(const Func &f, int stage, const std::vector<Arg> &a, std::vector<size_t> which,
                            std::string *hint) const {
        std::vector<std::string> loops = loops_of(f, stage, spec);
        for (size_t i : which) {
            if (i >= a.size()) continue;
            std::string n = loop(f, stage, a[i]).name();
            if (std::find(loops.begin(), loops.end(), n) != loops.end()) continue;
            std::string near = replaced_loop(f, stage, spec, n) ? "" : nearest(n, loops);
            if (!near.empty()) *hint = "; did you mean '" + near + "'?";
            return &a[i];
        }
        return nullptr;
    }

    void directive(Func f, int stage, const ScheduleDirective &d) {
        std::vector<Arg> a;
        std::vector<Expr> num(d.args.size());
        // natural_vector_size of a Tuple: that of its widest element.
        Type ft = f.types()[0];
        for (const Type &t : f.types()) ft = t.bits > ft.bits ? t : ft;
        for (size_t i = 0; i < d.args.size(); i++) {
            bool placed = i < d.arg_lines.size() && i < d.arg_cols.size();  // hand-built directives may lack them
            int line = placed ? d.arg_lines[i] : d.line, col = placed ? d.arg_cols[i] : d.col;
            a.push_back(parse_arg_text(d.args[i], file, line, col));
            if (!a[i].is_name()) num[i] = Expr(evaluate(a[i], target, ft, file));
        }
        auto var = [&](size_t i) { return loop(f, stage, a[i]); };
        auto tail = [&](size_t i) { return i < a.size() ? tail_named(a[i].name) : TailStrategy::Auto; };
        const std::string &n = d.name;

        std::vector<size_t> refs = {0};  // arguments that must be current loops
        if (n == "fuse" || n == "tile" || n == "npu_tile") refs = {0, 1};
        if (n == "reorder") for (size_t i = 1; i < a.size(); i++) refs.push_back(i);
        if (n == "compute_with") refs.clear();  // names another Func's loop, checked at the end
        if (n == "rfactor") for (size_t i = 2; i + 1 < a.size(); i += 2) refs.push_back(i);
        std::string hint;
        const Arg *bad = nullptr;
        if (n == "store_in") {
            bool known = false;
            for (int m = 1; m <= (int)MemoryType::L0C; m++) known |= a[0].name == to_string((MemoryType)m);
            if (!known) {
                bad = &a[0];
                hint = "; the memories are GM, UB, L1, L0A, L0B and L0C";
            }
        } else if (n == "bound" || n == "fold_storage") {
            std::vector<std::string> dims;
            for (const auto &v : f.args()) dims.push_back(v.name());
            bool known = std::find(dims.begin(), dims.end(), a[0].name) != dims.end();
            std::string near = known ? "" : nearest(a[0].name, dims);
            if (!known) bad = &a[0];
            if (!near.empty()) hint = "; did you mean '" + near + "'?";
        } else if (!whole_func(n)) {
            bad = unknown_loop(f, stage, a, refs, &hint);
        }

        // A compute_at/store_at site: a Func of the pipeline, and a loop of it.
        const Func *site = nullptr;
        bool site_rvar = false;
        if ((n == "compute_at" || n == "store_at" || n == "compute_with") && a.size() >= 2) {
            site = &find_func(a[0].name, a[0].line, a[0].col, n + ": ");
            for (int s = 0; s < site->contents()->num_stages(); s++)
                for (const auto &dim : site->contents()->stage(s).schedule.dims)
                    site_rvar |= dim.user_name == a[1].name && dim.is_rvar;
            pending.push_back({n, *site, a[1]});
        }
        auto site_var = [&] { return VarOrRVar(a[1].name, site_rvar); };

        LoopAlignStrategy align = n == "compute_with" ? align_named(a, file) : LoopAlignStrategy::Auto;
        const bool forward = n == "fold_storage" ? fold_forward(a, file) : true;
        if (n == "rfactor") {  // binds the intermediate's name for later stanzas
            const Arg &named = a.back();
            if (funcs.count(named.name) || named.name.find('.') != std::string::npos)
                error_at(file, named.line, named.col,
                         "In schedule of " + f.contents()->stage_name(stage) +
                             ": rfactor: the intermediate needs a new Func name without dots; '" + named.name +
                             "' is " + (funcs.count(named.name) ? "already a Func of the pipeline" : "dotted") +
                             "; name it e.g. " + f.name() + "_intm");
        }

        auto loop_types = [&] {
            std::map<std::string, ForType> t;
            for (const auto &dim : schedule_of(f, stage, spec).dims) t[dim.var] = dim.for_type;
            return t;
        };
        std::map<std::string, ForType> types_before = loop_types();
        Stage st(f.contents(), stage, spec);
        try {
            if (n == "split") st.split(var(0), var(1), var(2), num[3], tail(4));
            else if (n == "fuse") st.fuse(var(0), var(1), var(2));
            else if (n == "reorder") {
                std::vector<VarOrRVar> v;
                for (size_t i = 0; i < a.size(); i++) v.push_back(var(i));
                st.reorder(v);
            } else if (n == "tile" && a.size() >= 8)
                st.tile(var(0), var(1), var(2), var(3), var(4), var(5), num[6], num[7], tail(8));
            else if (n == "tile") st.tile(var(0), var(1), var(2), var(3), num[4], num[5], tail(6));
            else if (n == "vectorize") a.size() == 1 ? st.vectorize(var(0)) : st.vectorize(var(0), num[1], tail(2));
            else if (n == "unroll") a.size() == 1 ? st.unroll(var(0)) : st.unroll(var(0), num[1], tail(2));
            else if (n == "parallel") a.size() == 1 ? st.parallel(var(0)) : st.parallel(var(0), num[1], tail(2));
            else if (n == "serial") st.serial(var(0));
            else if (n == "npu_tile") st.npu_tile(var(0), var(1));
            else if (n == "compute_root" || (n == "compute_at" && a.size() == 1)) f.compute_root();
            else if (n == "compute_at") f.compute_at(*site, site_var());
            else if (n == "compute_inline") f.compute_inline();
            else if (n == "store_root" || (n == "store_at" && a.size() == 1)) f.store_root();
            else if (n == "store_at") f.store_at(*site, site_var());
            else if (n == "bound") f.bound(Var(a[0].name), num[1], num[2]);
            else if (n == "fold_storage") f.fold_storage(Var(a[0].name), num[1], forward);
            else if (n == "rfactor") {
                std::vector<std::pair<RVar, Var>> pairs;
                for (size_t i = 0; i + 1 < a.size(); i += 2) pairs.push_back({RVar(var(i).name()), Var(a[i + 1].name)});
                Func intm = st.rfactor(pairs, a.back().name);
                funcs.emplace(intm.name(), intm);
                names.push_back(intm.name());
            }
            else if (n == "store_in") f.store_in(memory_named(a[0].name, d.name));
            else if (n == "double_buffer") f.double_buffer();
            else if (n == "compute_with") st.compute_with(*site, site_var(), align);
            else internal_error << "ScheduleFile::apply: directive " << n << " passed the parser but is not applied";
        } catch (const CompileError &e) {
            int line = bad ? bad->line : d.line, col = bad ? bad->col : d.col;
            error_at(file, line, col, e.what() + hint);
        }
        // Lowering checks the compute and store levels; its errors point here.
        std::string at = file + ":" + std::to_string(d.line) + ":" + std::to_string(d.col);
        if (n == "compute_root" || n == "compute_at" || n == "compute_inline")
            record_schedule_origin(f.contents(), "compute", at);
        if (n == "store_root" || n == "store_at") record_schedule_origin(f.contents(), "store", at);
        if (n == "fold_storage") record_schedule_origin(f.contents(), "fold." + a[0].name, at);
        // ... and so do its errors about the loops this directive made vectorized, unrolled or parallel.
        for (const auto &t : loop_types()) {
            auto before = types_before.find(t.first);
            if (t.second != ForType::Serial && (before == types_before.end() || before->second != t.second))
                record_loop_origin(f.contents(), stage, t.first, at);
        }
    }
};

}  // namespace

void ScheduleFile::apply(const Pipeline &p, const Target &t) const {
    Applier a(filename_, p, t);
    for (const auto &s : stanzas_) a.stanza(s);
    a.check_pending_levels();
}

}  // namespace kiln
