#include "AddEntryChecks.h"

#include "ir/Simplify.h"
#include "kiln_runtime.h"

namespace kiln {
namespace internal {

namespace {

Expr var(const std::string &n) { return Variable::make(Int(32), n); }
Expr str(const std::string &s) { return StringImm::make(s); }

// One assertion per dimension: the buffer covers the box.
void check_box(std::vector<Stmt> &checks, const std::string &kernel, const std::string &buf, const Box &box,
               bool is_input) {
    for (size_t d = 0; d < box.size(); d++) {
        std::string dn = std::to_string(d);
        Expr bmin = var(buf + ".min." + dn), bext = var(buf + ".extent." + dn);
        // Named lets keep the check readable in the emitted code.
        std::string what = buf + (is_input ? ".read" : ".written");
        Expr lo = var(what + ".min." + dn), hi = var(what + ".max." + dn);
        Expr cond = bmin <= lo && hi <= bmin + bext - 1;
        std::vector<Expr> msg = {str(kernel + ": " + (is_input ? "input '" : "output '") + buf + "' is " +
                                     (is_input ? "read" : "written") + " over [") ,
                                 lo, str(", "), hi, str("] in dimension " + dn + ", but the buffer covers only ["),
                                 bmin, str(", "), simplify(bmin + bext - 1), str("]")};
        int code = is_input ? kiln_error_input_too_small : kiln_error_output_too_small;
        Stmt check = AssertStmt::make(cond, code, msg);
        check = LetStmt::make(what + ".max." + dn, simplify(box[d].max), check);
        check = LetStmt::make(what + ".min." + dn, simplify(box[d].min), check);
        checks.push_back(check);
    }
}

}  // namespace

Stmt add_entry_checks(const Stmt &s, const std::string &kernel, const PipelineRegions &regions,
                      const std::map<std::string, std::shared_ptr<ParameterContents>> &params) {
    std::vector<Stmt> checks;
    for (const auto &kv : regions.inputs) check_box(checks, kernel, kv.first, kv.second, true);
    for (const auto &kv : regions.outputs) check_box(checks, kernel, kv.first, kv.second, false);
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
