#include "CSE.h"

#include <functional>
#include <map>
#include <set>

#include "ir/ExprKey.h"
#include "ir/Substitute.h"
#include "ir/IRVisitor.h"

namespace kiln {
namespace internal {

namespace {

// Whether e may be named by a let (CSE.h says what is not).
bool nameable(const Expr &e) {
    if (e.as<Variable>() || e.as<IntImm>() || e.as<UIntImm>() || e.as<FloatImm>() || e.as<StringImm>() ||
        e.as<Ramp>() || e.as<Broadcast>() || e.as<Let>())
        return false;
    if (const Call *c = e.as<Call>(); c && c->call_type != Call::PureExtern) return false;
    const Type t = e.type();
    if (!t.is_scalar() && !t.is_float()) return false;
    // A scalar operation of leaves (x * 8, a + 1) costs the C++ compiler
    // less than a name costs the reader.
    class HasInner : public IRVisitor {
    public:
        int depth = 0;
        bool inner = false;
        void include(const Expr &e) override {
            if (inner) return;
            if (depth++ == 1) inner = !(e.as<Variable>() || e.as<IntImm>() || e.as<UIntImm>() || e.as<FloatImm>());
            else IRVisitor::include(e);
            depth--;
        }
    } h;
    h.include(e);
    return !t.is_scalar() || e.as<Load>() || h.inner;
}

// How many distinct parents use each nameable subexpression (by its text):
// a repeated subexpression's operands are counted at its first use only, as
// naming it names them once too.
class CountUses : public IRVisitor {
public:
    // Which subexpressions may be named (all, within one store).
    explicit CountUses(std::function<bool(const Expr &)> m = nullptr) : movable(std::move(m)) {}
    std::map<std::string, int> uses;
    bool any_repeated = false;
    using IRVisitor::include;
    void include(const Expr &e) override {
        if (!e.defined()) return;
        if (nameable(e) && (!movable || movable(e))) {
            int &n = uses[*expr_key(e)];
            if (n++ > 0) {
                any_repeated = true;
                return;
            }
        }
        IRVisitor::include(e);
    }

protected:
    // Evaluated on one path only, or naming what a Let binds: not entered.
    void visit(const Select *op) override { include(op->condition); }
    void visit(const And *op) override {
        if (op->type.is_vector()) IRVisitor::visit(op);
    }
    void visit(const Or *op) override {
        if (op->type.is_vector()) IRVisitor::visit(op);
    }
    void visit(const Let *) override {}

private:
    std::function<bool(const Expr &)> movable;
};

// Replaces each subexpression used twice or more by a variable, collecting
// the lets in the order they must be defined (operands first).
class NameShared : public IRMutator {
public:
    NameShared(const std::map<std::string, int> &u, int &c, std::function<bool(const Expr &)> m = nullptr)
        : uses(u), counter(c), movable(std::move(m)) {}
    std::vector<std::pair<std::string, Expr>> lets;
    using IRMutator::mutate;
    Expr mutate(const Expr &e) override {
        if (!e.defined() || !nameable(e) || (movable && !movable(e))) return IRMutator::mutate(e);
        const std::string &key = *expr_key(e);
        auto u = uses.find(key);
        if (u == uses.end() || u->second < 2) return IRMutator::mutate(e);
        auto it = named.find(key);
        if (it != named.end()) return it->second;
        Expr value = IRMutator::mutate(e);
        std::string name = "cse." + std::to_string(counter++);
        lets.push_back({name, value});
        Expr v = Variable::make(e.type(), name);
        named[key] = v;
        return v;
    }

protected:
    const std::map<std::string, int> &uses;
    int &counter;
    std::function<bool(const Expr &)> movable;
    std::map<std::string, Expr> named;
    Expr visit(const Select *op) override {
        Expr c = mutate(op->condition);
        return c.same_as(op->condition) ? Expr(op) : Select::make(c, op->true_value, op->false_value);
    }
    Expr visit(const And *op) override { return op->type.is_vector() ? IRMutator::visit(op) : Expr(op); }
    Expr visit(const Or *op) override { return op->type.is_vector() ? IRMutator::visit(op) : Expr(op); }
    Expr visit(const Let *op) override { return Expr(op); }
};

void flatten(const Stmt &s, std::vector<Stmt> &out) {
    if (const Block *b = s.as<Block>()) {
        flatten(b->first, out);
        flatten(b->rest, out);
    } else if (s.defined()) {
        out.push_back(s);
    }
}

class EliminateCSE : public IRMutator {
    int counter = 0;
    std::set<std::string> allocated;  // the pipeline's own buffers in scope

    Stmt visit(const Allocate *op) override {
        const bool fresh = op->owns_memory() && allocated.insert(op->name).second;
        Stmt s = IRMutator::visit(op);
        if (fresh) allocated.erase(op->name);
        return s;
    }

    Stmt visit(const Block *op) override {
        std::vector<Stmt> stmts, out;
        flatten(Stmt(op), stmts);
        for (size_t i = 0; i < stmts.size();) {
            size_t j = i;
            while (j < stmts.size() && stmts[j].as<Store>()) j++;
            if (j - i >= 2) {
                out.push_back(share_across({stmts.begin() + i, stmts.begin() + j}));
                i = j;
            } else {
                out.push_back(mutate(stmts[i]));
                i++;
            }
        }
        return Block::make(out);
    }

    // Consecutive stores (CSE.h: across stores): the subexpressions that
    // may move before the first store and are computed more than once are
    // named before them all, then each store's own.
    Stmt share_across(const std::vector<Stmt> &stores) {
        std::set<std::string> stored;
        bool all_own = true;
        for (const Stmt &s : stores) {
            const std::string &name = s.as<Store>()->name;
            stored.insert(name);
            all_own &= allocated.count(name) > 0;
        }
        auto movable = [&](const Expr &e) {
            return !expr_loads_if(e, [&](const std::string &b) { return !all_own || stored.count(b) > 0; });
        };
        CountUses count(movable);
        for (const Stmt &s : stores) {
            count.include(s.as<Store>()->value);
            count.include(s.as<Store>()->index);
        }
        std::vector<Stmt> out;
        if (!count.any_repeated) {
            for (const Stmt &s : stores) out.push_back(mutate(s));
            return Block::make(out);
        }
        NameShared name(count.uses, counter, movable);
        for (const Stmt &s : stores) {
            const Store *st = s.as<Store>();
            Expr value = name.mutate(st->value), index = name.mutate(st->index);
            out.push_back(mutate(Store::make(st->name, value, index)));
        }
        Stmt body = Block::make(out);
        for (auto it = name.lets.rbegin(); it != name.lets.rend(); ++it) body = LetStmt::make(it->first, it->second, body);
        return body;
    }

    Stmt visit(const Store *op) override {
        CountUses count;
        count.include(op->value);
        count.include(op->index);
        if (!count.any_repeated) return Stmt(op);
        NameShared name(count.uses, counter);
        Expr value = name.mutate(op->value), index = name.mutate(op->index);
        Stmt s = Store::make(op->name, value, index);
        for (auto it = name.lets.rbegin(); it != name.lets.rend(); ++it) s = LetStmt::make(it->first, it->second, s);
        return s;
    }
};

}  // namespace

Stmt eliminate_common_subexpressions(const Stmt &s) { return EliminateCSE().mutate(s); }

}  // namespace internal
}  // namespace kiln
