#include "SavedResiduals.h"

#include <algorithm>
#include <set>

#include "ir/Error.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "ir/Substitute.h"
#include "ir/Util.h"

namespace kiln {
namespace internal {

namespace {

// The comparison `cmp(value, k)` as an Expr of the Variable "value" of type t,
// with the saved Func's call on the left; `flipped`: the call was on the right.
template<typename Node>
Expr comparison(const Node *op, bool flipped, Type t) {
    Expr value = Variable::make(t, "value");
    const Expr &k = flipped ? op->a : op->b;
    if (!flipped) return Node::make(value, k);
    // k < f  is  f > k, and so on.
    if (std::is_same<Node, LT>::value) return GT::make(value, k);
    if (std::is_same<Node, LE>::value) return GE::make(value, k);
    if (std::is_same<Node, GT>::value) return LT::make(value, k);
    if (std::is_same<Node, GE>::value) return LE::make(value, k);
    return Node::make(value, k);  // EQ, NE
}

// Rewrites one Func's calls of saved Funcs (by name) into reads of their buffers.
class ReadSaved : public IRMutator {
public:
    ReadSaved(std::map<std::string, SavedResidual> &saved, const std::string &reader) : saved(saved), reader(reader) {}

protected:
    using IRMutator::visit;
    std::map<std::string, SavedResidual> &saved;
    const std::string &reader;

    SavedResidual *find(const Expr &e) const {
        const Call *c = e.as<Call>();
        if (!c || c->call_type != Call::Func) return nullptr;
        auto it = saved.find(c->name);
        return it == saved.end() ? nullptr : &it->second;
    }

    // One of f's bits: bit (x % 8) of f_bits(x / 8, y, ...).
    static Expr bit(const SavedResidual &r, std::vector<Expr> args) {
        Expr x = args[0];
        args[0] = x / 8;
        Expr byte = Call::make(UInt(8), r.buffer->name, args, Call::Image, nullptr, r.buffer);
        Expr shift = Cast::make(UInt(8), x % 8);
        return ((byte >> shift) & make_const(UInt(8), (int64_t)1)) == make_const(UInt(8), (int64_t)1);
    }

    template<typename Node>
    Expr compare(const Node *op) {
        SavedResidual *r = nullptr;
        bool flipped = false;
        if ((r = find(op->a)) && is_const(op->b)) flipped = false;
        else if ((r = find(op->b)) && is_const(op->a)) flipped = true;
        if (!r || r->how != Residual::Bits) return IRMutator::visit(op);
        const Call *c = (flipped ? op->b : op->a).template as<Call>();
        for (const Expr &a : c->args)
            user_assert(!find(a)) << "Func " << r->func << " is saved as bits (save(bits)) but " << reader
                                  << " reads it at a coordinate computed from a saved Func: " << Expr(op)
                                  << "; save() it whole";
        Expr cond = comparison(op, flipped, c->type);
        if (!r->condition.defined()) r->condition = cond;
        user_assert(equal(r->condition, cond))
            << "Func " << r->func << " is saved as bits (save(bits)), one comparison per point, but the backward "
            << "pass compares it in two ways: " << substitute_value(r->condition, r->func) << " and "
            << substitute_value(cond, r->func) << " (in " << reader << "); save() it whole";
        std::vector<Expr> args;
        for (const Expr &a : c->args) args.push_back(mutate(a));
        return bit(*r, args);
    }

    static Expr substitute_value(const Expr &cond, const std::string &f) {
        // For messages: "value >= 0.0f" -> "bias_add(...) >= 0.0f".
        std::ostringstream s;
        s << cond;
        std::string t = s.str();
        size_t at = t.find("value");
        if (at != std::string::npos) t.replace(at, 5, f + "(...)");
        return StringImm::make(t);
    }

    Expr visit(const EQ *op) override { return compare(op); }
    Expr visit(const NE *op) override { return compare(op); }
    Expr visit(const LT *op) override { return compare(op); }
    Expr visit(const LE *op) override { return compare(op); }
    Expr visit(const GT *op) override { return compare(op); }
    Expr visit(const GE *op) override { return compare(op); }

    Expr visit(const Call *op) override {
        Expr e = IRMutator::visit(op);
        SavedResidual *r = find(e);
        if (!r) return e;
        const Call *c = e.as<Call>();
        if (r->how == Residual::Float16 || r->how == Residual::BFloat16) {  // read widened back
            Expr narrow = Call::make(r->buffer->type, r->buffer->name, c->args, Call::Image, nullptr, r->buffer);
            return Cast::make(c->type, narrow);
        }
        user_assert(r->how == Residual::Whole)
            << "Func " << r->func << " is saved as bits (save(bits)), but " << reader << " reads its value: " << e
            << ", not only a comparison of it with a constant (such as " << r->func
            << "(x, y) >= 0); save() it whole, or leave it to be recomputed";
        return Call::make(c->type, r->buffer->name, c->args, Call::Image, nullptr, r->buffer);
    }
};

}  // namespace

std::vector<SavedResidual> read_saved_residuals(Environment &env, const std::vector<std::string> &outputs) {
    // What this pipeline computes itself: its outputs and what they encode.
    std::set<std::string> computed;
    for (const std::string &o : outputs) {
        computed.insert(o);
        if (env.count(o) && !env.at(o)->encodes_residual.empty()) computed.insert(env.at(o)->encodes_residual);
    }
    std::map<std::string, SavedResidual> saved;
    for (const auto &[name, f] : env) {
        if (f->schedule.residual == Residual::None || computed.count(name)) continue;
        internal_assert(f->schedule.residual_buffer) << "saved Func " << name << " without a buffer";
        SavedResidual r;
        r.func = name;
        r.how = f->schedule.residual;
        r.buffer = f->schedule.residual_buffer;
        saved[name] = r;
    }
    if (saved.empty()) return {};

    // Only the Funcs the outputs reach without passing through a saved one
    // are read (and rewritten); the others leave the pipeline below.
    std::set<std::string> live;
    std::vector<std::string> work = outputs;
    while (!work.empty()) {
        std::string n = work.back();
        work.pop_back();
        if (!env.count(n) || saved.count(n) || !live.insert(n).second) continue;
        for (const std::string &c : direct_callees(*env.at(n))) work.push_back(c);
        for (const auto &kv : env.at(n)->schedule.wrappers) work.push_back(kv.second->name);
    }
    for (auto &[name, f] : env) {
        if (!live.count(name)) continue;
        ReadSaved read(saved, name);
        for (int s = 0; s < f->num_stages(); s++) {
            Definition &d = f->stage(s);
            for (auto &v : d.values) v = read.mutate(v);
            for (auto &a : d.args) a = read.mutate(a);
        }
    }
    // A call left is outside the values and coordinates.
    for (const std::string &n : live)
        for (const std::string &c : direct_callees(*env.at(n)))
            user_assert(!saved.count(c))
                << "Func " << c << " is saved (save()), but " << n << " calls it outside its definitions' values and "
                << "coordinates (an RDom bound or predicate, a split factor or a bound()), which cannot read a saved "
                << "buffer; leave " << c << " to be recomputed";
    for (auto it = env.begin(); it != env.end();) it = live.count(it->first) ? std::next(it) : env.erase(it);

    // What the Funcs left read (a Func read only by dropped ones is not an input).
    std::map<std::string, std::shared_ptr<ParameterContents>> read = find_parameters(env);
    std::vector<SavedResidual> used;
    for (const auto &kv : saved)
        if (read.count(kv.second.buffer->name)) used.push_back(kv.second);
    return used;
}

}  // namespace internal
}  // namespace kiln
