#include "AddEntryChecks.h"

#include <algorithm>
#include <set>

#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Util.h"
#include "kiln_runtime.h"

namespace kiln {
namespace internal {

namespace {

Expr str(const std::string &s) { return StringImm::make(s); }

// For each input image (and each Func, for an output other outputs read),
// the Funcs whose produce nodes read it (after inlining: the Funcs whose
// loops compute the reads), in first-read order.
class FindReaders : public IRVisitor {
public:
    std::map<std::string, std::vector<std::string>> readers;

protected:
    std::vector<std::string> producing;
    void visit(const ProducerConsumer *op) override {
        if (op->is_producer) producing.push_back(op->name);
        IRVisitor::visit(op);
        if (op->is_producer) producing.pop_back();
    }
    void visit(const Call *op) override {
        IRVisitor::visit(op);
        if ((op->call_type != Call::Image && op->call_type != Call::Func) || producing.empty() ||
            producing.back() == op->name)
            return;
        std::vector<std::string> &r = readers[op->name];
        if (std::find(r.begin(), r.end(), producing.back()) == r.end()) r.push_back(producing.back());
    }
};

// What to do about an input read past its edges, after the numbers:
//   "; computing Func f reads it there. Read the input through a boundary condition ..."
std::string input_fix(const std::string &buf, const std::vector<std::string> &readers) {
    std::string who = join(readers);
    bool one = readers.size() == 1;
    std::string m = readers.empty() ? "" : "; computing Func" + std::string(one ? " " : "s ") + who +
                                               (one ? " reads" : " read") + " it there";
    return m + ". Read the input through a boundary condition, e.g. Func " + buf + "_edge = BoundaryConditions::" +
           "repeat_edge(" + buf + ") (or constant_exterior(" + buf + ", 0)), and call " + buf + "_edge(...) where " +
           "you call " + buf + "(...); or pass a larger input; or realize a smaller output";
}

// One assertion per dimension: the buffer covers the box.
// An input read, an output written, or an output that other Funcs of the
// pipeline read.
enum class Access { InputRead, OutputWritten, OutputRead };

void check_box(std::vector<Stmt> &checks, const std::string &kernel, const std::string &buf, const Box &box,
               Access access, const std::string &fix) {
    const bool read = access != Access::OutputWritten, input = access == Access::InputRead;
    for (size_t d = 0; d < box.size(); d++) {
        std::string dn = std::to_string(d);
        Expr bmin = make_var(buf + ".min." + dn), bext = make_var(buf + ".extent." + dn);
        // Named lets keep the check readable in the emitted code.
        std::string what = buf + (read ? ".read" : ".written");
        Expr lo = make_var(what + ".min." + dn), hi = make_var(what + ".max." + dn);
        Expr cond = bmin <= lo && hi <= bmin + bext - 1;
        std::vector<Expr> msg = {str(kernel + ": " + (input ? "input '" : "output '") + buf + "' is " +
                                     (read ? "read" : "written") + " over [") ,
                                 lo, str(", "), hi, str("] in dimension " + dn + ", but the buffer covers only ["),
                                 bmin, str(", "), simplify(bmin + bext - 1), str("]" + fix)};
        int code = input ? kiln_error_input_too_small : kiln_error_output_too_small;
        Stmt check = AssertStmt::make(cond, code, msg);
        check = LetStmt::make(what + ".max." + dn, simplify(box[d].max), check);
        check = LetStmt::make(what + ".min." + dn, simplify(box[d].min), check);
        checks.push_back(check);
    }
}

// An output computed at a loop of another output writes what that output
// reads of it, so its buffer must be no larger: one assertion per dimension.
//   mean at output's loop y, output rows [0, 63], mean's buffer [0, 99]  ->  kiln_error_output_too_large
void check_covered(std::vector<Stmt> &checks, const std::string &kernel, const std::string &buf, const Box &box,
                   const std::string &at) {
    for (size_t d = 0; d < box.size(); d++) {
        std::string dn = std::to_string(d);
        Expr bmin = make_var(buf + ".min." + dn), bext = make_var(buf + ".extent." + dn);
        Expr lo = make_var(buf + ".computed.min." + dn), hi = make_var(buf + ".computed.max." + dn);
        Expr cond = lo <= bmin && bmin + bext - 1 <= hi;
        std::vector<Expr> msg = {
            str(kernel + ": output '" + buf + "' is computed at the loop of compute_at(" + at + "), which computes it "
                "over [" ),
            lo, str(", "), hi, str("] in dimension " + dn + ", but the buffer covers ["), bmin, str(", "),
            simplify(bmin + bext - 1),
            str("]: the rest would be left unwritten. Pass a buffer of the region that loop computes, or compute " +
                buf + " at the root")};
        Stmt check = AssertStmt::make(cond, kiln_error_output_too_large, msg);
        check = LetStmt::make(buf + ".computed.max." + dn, simplify(box[d].max), check);
        check = LetStmt::make(buf + ".computed.min." + dn, simplify(box[d].min), check);
        checks.push_back(check);
    }
}

// Whether every variable of e is a Param or a buffer field (known on entry).
bool known_on_entry(const Expr &e) {
    struct Find : IRVisitor {
        bool free = false;
        void visit(const Variable *op) override { free |= !op->param; }
    } f;
    f.include(e);
    return !f.free;
}

// A split factor of Params or buffer fields is positive.
void check_split_factors(std::vector<Stmt> &checks, const std::string &kernel, const Environment &env) {
    std::set<std::string> seen;
    for (const auto &kv : env) {
        const FunctionContents &f = *kv.second;
        for (int k = 0; k < f.num_stages(); k++) {
            std::vector<const StageSchedule *> scheds = {&f.stage(k).schedule};
            for (const auto &sp : f.stage(k).specializations) scheds.push_back(&sp.schedule);
            for (const StageSchedule *sc : scheds)
                for (const Split &sp : sc->splits) {
                    if (sp.kind != Split::SplitVar || is_const(sp.factor) || !known_on_entry(sp.factor)) continue;
                    std::string call = "Func " + f.stage_name(k) + ": split(" + last_component(sp.old_var) + ", " +
                                       last_component(sp.outer) + ", " + last_component(sp.inner) + ", " +
                                       to_string(sp.factor) + ")";
                    if (!seen.insert(call).second) continue;
                    checks.push_back(AssertStmt::make(
                        sp.factor > 0, kiln_error_bad_split_factor,
                        {str(kernel + ": " + call + " has factor "), sp.factor,
                         str(" in this run; a split factor must be positive: pass larger buffers or Params, or write "
                             "max(1, ...)")}));
                }
        }
    }
}

}  // namespace

Stmt add_entry_checks(const Stmt &s, const std::string &kernel, const PipelineRegions &regions,
                      const std::map<std::string, std::shared_ptr<ParameterContents>> &params, const Environment &env) {
    std::vector<Stmt> checks;
    check_split_factors(checks, kernel, env);
    FindReaders find;
    find.include(s);
    // Outputs first: a tile wider than the output also reads the inputs past
    // their edges, and the output's message names the cause.
    for (const auto &kv : regions.outputs)
        check_box(checks, kernel, kv.first, kv.second, Access::OutputWritten,
                  "; the schedule writes there (a ShiftInwards or RoundUp split whose tile is wider than the buffer, "
                  "or an update outside it): pass a buffer at least one tile large, or give the split "
                  "TailStrategy::GuardWithIf");
    for (const auto &kv : regions.written_within)
        check_covered(checks, kernel, kv.first, regions.outputs.at(kv.first), kv.second);
    for (const auto &kv : regions.output_reads)
        check_box(checks, kernel, kv.first, kv.second, Access::OutputRead,
                  "; Func " + join(find.readers[kv.first]) + " of this pipeline reads it there, and an output "
                  "is computed over its buffer only: pass a larger buffer, or clamp the coordinate where it is "
                  "read");
    for (const auto &kv : regions.inputs) {
        auto p = params.find(kv.first);
        if (p != params.end() && !p->second->saved_func.empty())  // a residual: the forward pass's buffer is wrong
            check_box(checks, kernel, kv.first, kv.second, Access::InputRead,
                      "; it holds " + p->second->saved_func + ", saved by the forward pass (save()) for " + kernel +
                          ", which reads it there: pass the buffer the forward pass wrote for the same sizes as "
                          "the inputs");
        else
            check_box(checks, kernel, kv.first, kv.second, Access::InputRead, input_fix(kv.first, find.readers[kv.first]));
    }
    for (const auto &kv : params) {
        const ParameterContents &p = *kv.second;
        if (p.is_buffer) continue;
        Expr v = Variable::make(p.type, p.name);
        if (p.min_value.defined()) {
            Expr lo = cast(p.type, p.min_value);
            checks.push_back(AssertStmt::make(v >= lo, kiln_error_param_out_of_range,
                                              {str(kernel + ": parameter '" + p.name + "' is "), v,
                                               str(", below its minimum "), lo}));
        }
        if (p.max_value.defined()) {
            Expr hi = cast(p.type, p.max_value);
            checks.push_back(AssertStmt::make(v <= hi, kiln_error_param_out_of_range,
                                              {str(kernel + ": parameter '" + p.name + "' is "), v,
                                               str(", above its maximum "), hi}));
        }
    }
    // Insert below the outermost chain of lets, after the checks bounds
    // inference put there (an output's bound() against its buffer): those
    // name the cause when a buffer is also not covered.
    std::vector<const LetStmt *> lets;
    Stmt body = s;
    while (const auto *l = body.as<LetStmt>()) {
        lets.push_back(l);
        body = l->body;
    }
    std::vector<Stmt> first;
    while (const auto *b = body.as<Block>()) {
        if (!b->first.as<AssertStmt>()) break;
        first.push_back(b->first);
        body = b->rest;
    }
    checks.insert(checks.begin(), first.begin(), first.end());
    checks.push_back(body);
    Stmt r = Block::make(checks);
    for (auto it = lets.rbegin(); it != lets.rend(); ++it) r = LetStmt::make((*it)->name, (*it)->value, r);
    return r;
}

}  // namespace internal
}  // namespace kiln
