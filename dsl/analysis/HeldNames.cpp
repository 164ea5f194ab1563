// HeldNames (HeldNames.h): each statement's names, as bit sets over the
// names asked about, computed from its children's the first time the
// statement is asked about.
#include "HeldNames.h"

#include <functional>

#include "ir/Error.h"
#include "ir/IRVisitor.h"

namespace kiln {
namespace internal {

namespace {

// Walks one statement node: its own names into `own`, and each child
// statement's held names (from the index) into it too.
class Gather : public IRVisitor {
public:
    using Child = std::function<void(const Stmt &)>;
    Gather(const Child &child, const std::function<void(const std::string &, int)> &own) : child(child), own(own) {}
    using IRVisitor::include;
    void include(const Expr &) override {}  // statements only
    void include(const Stmt &s) override {
        if (s.defined()) child(s);
    }
    void gather(const Stmt &s) { IRVisitor::include(s); }

private:
    const Child &child;
    const std::function<void(const std::string &, int)> &own;  // 0: a Func, 1: a loop, 2: a let
    void visit(const ProducerConsumer *op) override {
        own(op->name, 0);
        IRVisitor::visit(op);
    }
    void visit(const Realize *op) override {
        own(op->name, 0);
        IRVisitor::visit(op);
    }
    void visit(const For *op) override {
        own(op->name, 1);
        IRVisitor::visit(op);
    }
    void visit(const LetStmt *op) override {
        own(op->name, 2);
        IRVisitor::visit(op);
    }
};

void set_bit(std::vector<uint64_t> &b, size_t i) { b[i / 64] |= uint64_t(1) << (i % 64); }
void add_bits(std::vector<uint64_t> &to, const std::vector<uint64_t> &from) {
    for (size_t i = 0; i < to.size(); i++) to[i] |= from[i];
}

}  // namespace

HeldNames::HeldNames(const std::set<std::string> &funcs, const std::set<std::string> &defined) {
    for (const std::string &f : funcs) func_index.emplace(f, func_index.size());
    for (const std::string &n : defined) name_index.emplace(n, name_index.size());
}

const HeldNames::Held &HeldNames::of(const Stmt &s) {
    auto it = held.find(s.get());
    if (it != held.end()) return it->second;
    Held h;
    h.node = s;
    h.funcs.assign((func_index.size() + 63) / 64, 0);
    h.any.assign((name_index.size() + 63) / 64, 0);
    h.lets = h.any;
    Gather::Child child = [&](const Stmt &c) {
        const Held &ch = of(c);
        add_bits(h.funcs, ch.funcs);
        add_bits(h.any, ch.any);
        add_bits(h.lets, ch.lets);
    };
    std::function<void(const std::string &, int)> own = [&](const std::string &n, int kind) {
        if (kind == 0) {
            auto f = func_index.find(n);
            if (f != func_index.end()) set_bit(h.funcs, f->second);
            return;
        }
        auto d = name_index.find(n);
        if (d == name_index.end()) return;
        set_bit(h.any, d->second);
        if (kind == 2) set_bit(h.lets, d->second);
    };
    Gather(child, own).gather(s);
    return held.emplace(s.get(), std::move(h)).first->second;
}

bool HeldNames::produces(const Stmt &s, const std::string &f) {
    auto i = func_index.find(f);
    internal_assert(i != func_index.end()) << "HeldNames: not asked about Func " << f;
    return s.defined() && test(of(s).funcs, i->second);
}

HeldNames::Defined HeldNames::defines(const Stmt &s) {
    Defined d;
    if (!s.defined()) return d;
    const Held &h = of(s);
    for (const auto &[n, i] : name_index) {
        if (test(h.any, i)) d.any.insert(n);
        if (test(h.lets, i)) d.lets.insert(n);
    }
    return d;
}

HeldNames::Defined HeldNames::defines(const Stmt &s, const std::set<std::string> &wanted) {
    Defined d;
    if (!s.defined() || wanted.empty()) return d;
    const Held &h = of(s);
    for (const std::string &n : wanted) {
        auto i = name_index.find(n);
        internal_assert(i != name_index.end()) << "HeldNames: not asked about name " << n;
        if (test(h.any, i->second)) d.any.insert(n);
        if (test(h.lets, i->second)) d.lets.insert(n);
    }
    return d;
}

}  // namespace internal
}  // namespace kiln
