#include "Associativity.h"

#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "ir/Substitute.h"

namespace kiln {
namespace internal {

namespace {

bool reads_func(const Expr &e, const std::string &func) {
    class Finder : public IRVisitor {
    public:
        const std::string *name;
        bool found = false;
        void visit(const Call *op) override {
            found |= op->call_type == Call::Func && op->name == *name;
            IRVisitor::visit(op);
        }
    } f;
    f.name = &func;
    f.include(e);
    return f.found;
}

// Is e the call f(args)[index]?
bool is_self(const Expr &e, const std::string &func, const std::vector<Expr> &args, int index) {
    const auto *c = e.as<Call>();
    if (!c || c->call_type != Call::Func || c->name != func || c->value_index != index) return false;
    if (c->args.size() != args.size()) return false;
    for (size_t i = 0; i < args.size(); i++)
        if (!equal(c->args[i], args[i])) return false;
    return true;
}

// A self-call at other coordinates, for the message.
std::string other_self_call(const Expr &e, const std::string &func, const std::vector<Expr> &args) {
    class Finder : public IRVisitor {
    public:
        const std::string *name;
        const std::vector<Expr> *args;
        std::string found;
        void visit(const Call *op) override {
            IRVisitor::visit(op);
            if (!found.empty() || op->call_type != Call::Func || op->name != *name) return;
            bool same = op->args.size() == args->size();
            for (size_t i = 0; same && i < op->args.size(); i++) same = equal(op->args[i], (*args)[i]);
            if (!same) found = to_string(Expr(op));
        }
    } f;
    f.name = &func;
    f.args = &args;
    f.include(e);
    return f.found;
}

struct Binary {
    const char *name;
    Expr a, b;
    Expr (*make)(Expr, Expr);
};

bool as_binary(const Expr &e, Binary &out) {
    if (const auto *op = e.as<Add>()) out = {"+", op->a, op->b, Add::make};
    else if (const auto *op = e.as<Sub>()) out = {"-", op->a, op->b, Sub::make};
    else if (const auto *op = e.as<Mul>()) out = {"*", op->a, op->b, Mul::make};
    else if (const auto *op = e.as<Min>()) out = {"min", op->a, op->b, Min::make};
    else if (const auto *op = e.as<Max>()) out = {"max", op->a, op->b, Max::make};
    else if (const auto *op = e.as<And>()) out = {"&&", op->a, op->b, And::make};
    else if (const auto *op = e.as<Or>()) out = {"||", op->a, op->b, Or::make};
    else return false;
    return true;
}

Expr identity_of(const std::string &op, Type t) {
    if (op == "+") return make_zero(t);
    if (op == "*") return make_one(t);
    if (op == "min") return type_max(t);
    if (op == "&&") return make_one(t);
    if (op == "||") return make_zero(t);
    return type_min(t);  // max
}

// Element i on its own: op(x, y) with x = f(args)[i].
bool match_element(const std::string &func, const std::vector<Expr> &args, const Expr &value, int i,
                   const std::string &x, const std::string &y, AssociativeOp &r, std::string &why) {
    Binary b;
    Type t = value.type();
    if (!as_binary(value, b)) {
        why = "its value " + to_string(value) + " is not +, -, *, min, max, && or || of " + func + "'s current value";
        return false;
    }
    Expr self, term;
    if (is_self(b.a, func, args, i)) self = b.a, term = b.b;
    else if (is_self(b.b, func, args, i) && std::string(b.name) != "-") self = b.b, term = b.a;
    if (!self.defined()) {
        std::string other = other_self_call(value, func, args);
        if (!other.empty()) why = "it reads " + other + ", at other coordinates than it writes";
        else if (!reads_func(value, func)) why = "its value " + to_string(value) + " does not read " + func;
        else why = "in " + to_string(value) + ", " + func + "'s current value is not an operand of the outer " + b.name;
        return false;
    }
    if (reads_func(term, func)) {
        std::string other = other_self_call(term, func, args);
        why = other.empty() ? "the term " + to_string(term) + " combined with " + func + "'s value also reads " + func
                            : "it reads " + other + ", at other coordinates than it writes";
        return false;
    }
    std::string op = b.name;
    if (op == "-") {  // x - y == x + (-y)
        op = "+";
        term = make_zero(t) - term;
    }
    Expr xv = Variable::make(t, x), yv = Variable::make(t, y);
    r.values.push_back(op == "+"    ? xv + yv
                       : op == "*"  ? xv * yv
                       : op == "min" ? min(xv, yv)
                       : op == "max" ? max(xv, yv)
                       : op == "&&" ? (xv && yv)
                                    : (xv || yv));
    r.incoming.push_back(term);
    r.identities.push_back(identity_of(op, t));
    r.description += (r.description.empty() ? "" : ", ") + op;
    return true;
}

// select(c, y, x) on every element with one condition c comparing the
// incoming first element with the current one.
bool match_arg_reduction(const std::string &func, const std::vector<Expr> &args, const std::vector<Expr> &values,
                         AssociativeOp &r) {
    const auto *s0 = values[0].as<Select>();
    if (!s0) return false;
    const Expr &cond = s0->condition;
    bool y_when_true = is_self(s0->false_value, func, args, 0);
    if (!y_when_true && !is_self(s0->true_value, func, args, 0)) return false;
    Expr y0 = y_when_true ? s0->true_value : s0->false_value;
    if (reads_func(y0, func)) return false;
    // Which way does the condition pick the incoming value?
    Expr a, b;
    bool less;  // cond is a < b or a <= b (else >, >=)
    if (const auto *c = cond.as<LT>()) a = c->a, b = c->b, less = true;
    else if (const auto *c = cond.as<LE>()) a = c->a, b = c->b, less = true;
    else if (const auto *c = cond.as<GT>()) a = c->a, b = c->b, less = false;
    else if (const auto *c = cond.as<GE>()) a = c->a, b = c->b, less = false;
    else return false;
    bool y_first;
    if (equal(a, y0) && is_self(b, func, args, 0)) y_first = true;
    else if (is_self(a, func, args, 0) && equal(b, y0)) y_first = false;
    else return false;
    // y is picked when it is smaller: a min-like (argmin) reduction.
    bool min_like = (less == y_first) == y_when_true;
    std::vector<Expr> ys;
    for (size_t i = 0; i < values.size(); i++) {
        const auto *s = values[i].as<Select>();
        if (!s || !equal(s->condition, cond)) return false;
        Expr self = y_when_true ? s->false_value : s->true_value, y = y_when_true ? s->true_value : s->false_value;
        if (!is_self(self, func, args, (int)i) || reads_func(y, func)) return false;
        ys.push_back(y);
    }
    std::vector<Expr> xv, yv;
    for (size_t i = 0; i < values.size(); i++) {
        Type t = values[i].type();
        r.x_names.push_back("rfactor.x" + std::to_string(i));
        r.y_names.push_back("rfactor.y" + std::to_string(i));
        xv.push_back(Variable::make(t, r.x_names.back()));
        yv.push_back(Variable::make(t, r.y_names.back()));
        r.identities.push_back(i == 0 ? (min_like ? type_max(t) : type_min(t)) : make_zero(t));
    }
    // The same comparison over the placeholders.
    Expr ca = y_first ? yv[0] : xv[0], cb = y_first ? xv[0] : yv[0];
    Expr c = cond.as<LT>() ? ca < cb : cond.as<LE>() ? ca <= cb : cond.as<GT>() ? ca > cb : ca >= cb;
    for (size_t i = 0; i < values.size(); i++)
        r.values.push_back(y_when_true ? select(c, yv[i], xv[i]) : select(c, xv[i], yv[i]));
    r.incoming = ys;
    r.commutative = false;
    r.description = min_like ? "argmin" : "argmax";
    return true;
}

// Halide's spelling of an argmax: the value element by max (min), the
// others by select on a comparison of the current and incoming values:
//   Tuple(max(f[0], v), select(f[0] < v, r, f[1]))
// The same operator as the select form with element 0 picked by that
// select too; rewritten so, and accepted when the comparison picks the
// larger (smaller) value, as max (min) does.
bool match_min_max_arg_reduction(const std::string &func, const std::vector<Expr> &args,
                                 const std::vector<Expr> &values, AssociativeOp &r) {
    const auto *mx = values[0].as<Max>();
    const auto *mn = values[0].as<Min>();
    const auto *s1 = values[1].as<Select>();
    if (!(mx || mn) || !s1) return false;
    Expr a = mx ? mx->a : mn->a, b = mx ? mx->b : mn->b;
    Expr self = is_self(a, func, args, 0) ? a : is_self(b, func, args, 0) ? b : Expr();
    if (!self.defined()) return false;
    Expr term = self.same_as(a) ? b : a;
    bool y_when_true = is_self(s1->false_value, func, args, 1);
    if (!y_when_true && !is_self(s1->true_value, func, args, 1)) return false;
    std::vector<Expr> v = values;
    v[0] = y_when_true ? select(s1->condition, term, self) : select(s1->condition, self, term);
    if (!match_arg_reduction(func, args, v, r)) return false;
    return r.description == (mx ? "argmax" : "argmin");
}

}  // namespace

AssociativeOp find_associative_op(const std::string &func, const std::vector<Expr> &args,
                                  const std::vector<Expr> &values) {
    for (auto match : {match_arg_reduction, match_min_max_arg_reduction}) {
        AssociativeOp r;
        if (values.size() > 1 && match(func, args, values, r)) {
            r.found = true;
            return r;
        }
    }
    AssociativeOp r;
    for (size_t i = 0; i < values.size(); i++) {
        r.x_names.push_back("rfactor.x" + std::to_string(i));
        r.y_names.push_back("rfactor.y" + std::to_string(i));
        std::string why;
        if (!match_element(func, args, values[i], (int)i, r.x_names[i], r.y_names[i], r, why)) {
            AssociativeOp none;
            none.why = values.size() == 1 ? why : "element " + std::to_string(i) + " of its Tuple: " + why;
            if (values.size() > 1 && values[i].as<Select>())
                none.why += " (a Tuple of selects is recognized as an argmin/argmax only when every element "
                            "selects between the incoming and current values on one comparison of the first "
                            "elements)";
            return none;
        }
    }
    r.found = true;
    return r;
}

}  // namespace internal
}  // namespace kiln
