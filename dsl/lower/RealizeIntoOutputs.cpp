#include "RealizeIntoOutputs.h"

#include <algorithm>
#include <map>

#include "ir/IRVisitor.h"
#include "ir/Substitute.h"
#include "kiln/IROperator.h"

namespace kiln {
namespace internal {

namespace {

// The Provides and the calls of Funcs in a statement, and whether any
// Variable names a field of Func `func`'s buffer (f.min.0, f.stride.1, ...).
class Uses : public IRVisitor {
public:
    explicit Uses(const std::string &func) : func(func) {}
    std::vector<const Provide *> provides;
    int calls_of_func = 0;
    bool buffer_fields = false;

protected:
    const std::string &func;
    void visit(const Provide *op) override {
        provides.push_back(op);
        IRVisitor::visit(op);
    }
    void visit(const Call *op) override {
        if (op->call_type == Call::Func && op->name == func) calls_of_func++;
        IRVisitor::visit(op);
    }
    void visit(const Variable *op) override {
        for (const char *field : {".min.", ".extent.", ".stride."})
            if (op->name.rfind(func + field, 0) == 0) buffer_fields = true;
    }
};

// Whether a Provide of `func` by one of its update stages writes at a loop
// variable of that stage in every dimension (f.s1.x, f.s1.y): an update of
// every point, such as a sum per point over an RDom, not of an edge or a
// point.
bool updates_every_point(const std::string &func, const Provide *p) {
    bool every = !p->args.empty();
    for (const Expr &a : p->args) {
        const Variable *v = a.as<Variable>();
        every &= v && v->name.rfind(func + ".s", 0) == 0 && v->name.rfind(func + ".s0.", 0) != 0;
    }
    return every;
}

class RealizeIntoOutputs : public IRMutator {
public:
    RealizeIntoOutputs(const std::vector<std::string> &outputs, const Environment &env, bool rename,
                       std::map<std::string, std::string> *into)
        : outputs(outputs), env(env), rename(rename), into(into) {}

protected:
    const std::vector<std::string> &outputs;
    const Environment &env;
    const bool rename;
    std::map<std::string, std::string> *into;
    using IRMutator::visit;

    // The output whose one definition copies f, if `consume` (the body of
    // consume f) is only that output's producer; "" otherwise.
    std::string copying_output(const Realize *op, const Stmt &consume) const {
        const ProducerConsumer *out = consume.as<ProducerConsumer>();
        if (!out || !out->is_producer) return "";
        if (std::find(outputs.begin(), outputs.end(), out->name) == outputs.end()) return "";
        Uses uses(op->name);
        uses.include(out->body);
        if (uses.provides.size() != 1 || uses.calls_of_func != 1) return "";
        const Provide *p = uses.provides[0];
        if (p->name != out->name || p->values.size() != 1 || p->args.size() != op->bounds.size()) return "";
        const Call *c = p->values[0].as<Call>();
        if (!c || c->call_type != Call::Func || c->name != op->name || c->type != op->types[0]) return "";
        for (size_t d = 0; d < p->args.size(); d++)
            if (!equal(p->args[d], c->args[d])) return "";
        return out->name;
    }

    Stmt visit(const Realize *op) override {
        Stmt s = IRMutator::visit(op);
        const Realize *r = s.as<Realize>();
        if (!r || r->types.size() != 1) return s;
        // Stored with another dimension innermost (reorder_storage): the
        // output's layout would not be f's.
        auto f = env.find(r->name);
        if (f != env.end() && !f->second->schedule.storage_dims.empty() &&
            f->second->schedule.storage_dims[0] != f->second->args[0])
            return s;
        for (const Expr &f : r->fold_factors)
            if (f.defined()) return s;
        const Block *b = r->body.as<Block>();
        const ProducerConsumer *produce = b ? b->first.as<ProducerConsumer>() : nullptr;
        const ProducerConsumer *consume = b ? b->rest.as<ProducerConsumer>() : nullptr;
        if (!produce || !consume || !produce->is_producer || consume->is_producer || produce->name != r->name ||
            consume->name != r->name)
            return s;
        const std::string out = copying_output(r, consume->body);
        if (out.empty()) return s;
        Uses in_producer(r->name);
        in_producer.include(produce->body);
        if (in_producer.buffer_fields) return s;  // the producer addresses f's own allocation
        // A sum per point keeps f in its allocation, where
        // promote_accumulators and hoist_invariant_loads keep the sum in
        // registers (they leave an output's stores alone).
        for (const Provide *p : in_producer.provides)
            if (p->name == r->name && updates_every_point(r->name, p)) return s;
        Expr same;
        for (size_t d = 0; d < r->bounds.size(); d++) {
            const std::string dn = std::to_string(d);
            Expr c = r->bounds[d].min == make_var(out + ".min." + dn) && r->bounds[d].extent == make_var(out + ".extent." + dn);
            same = same.defined() ? (same && c) : c;
        }
        if (!same.defined()) return s;
        if (into) (*into)[r->name] = out;
        // The fusion report counts f's stages as f's own in the output,
        // with no allocation or copy.
        if (!rename) return IfThenElse::make(same, Stmt(produce), s);
        // Host code: f's producer once, storing into the output's buffer or
        // its own allocation as chosen at run time; the copy only for the
        // latter.
        const std::string in_place_name = r->name + ".in_place";
        Expr in_place = make_var(in_place_name, Bool());
        Stmt copy = ProducerConsumer::make(r->name, false, IfThenElse::make(!in_place, consume->body));
        Stmt realize = Realize::make(r->name, r->types, r->bounds, Block::make(Stmt(produce), copy), r->fold_factors,
                                     out, in_place);
        return LetStmt::make(in_place_name, same, realize);
    }
};

}  // namespace

Stmt realize_into_outputs(const Stmt &s, const std::vector<std::string> &outputs, const Environment &env, bool rename,
                          std::map<std::string, std::string> *into) {
    return RealizeIntoOutputs(outputs, env, rename, into).mutate(s);
}

}  // namespace internal
}  // namespace kiln
