#include "UniqueNames.h"

#include <algorithm>
#include <map>

#include "RealizationOrder.h"
#include "ir/IRVisitor.h"

namespace kiln {
namespace internal {

namespace {

using OldNames = std::map<const FunctionContents *, std::string>;

// Calls of renamed Funcs get the new name. A call without its Func (a Func's
// call to itself, a wrapper's call to what it wraps) is matched by name.
class RenameCalls : public IRMutator {
public:
    RenameCalls(const OldNames &old, const FunctionContents &self) : old(old) {
        by_name[old_name(&self)] = &self;
        if (auto w = self.wrapped_func.lock()) by_name[old_name(w.get())] = w.get();
    }

protected:
    const OldNames &old;
    std::map<std::string, const FunctionContents *> by_name;  // the Funcs named by calls without a pointer

    std::string old_name(const FunctionContents *f) const {
        auto it = old.find(f);
        return it == old.end() ? f->name : it->second;
    }

    // A field of a renamed output's buffer (f.output_buffer().width()):
    // the buffer's new name, then ".extent.0".
    Expr visit(const Variable *op) override {
        if (!op->param || !op->param->is_output || op->name.rfind(op->param->name + ".", 0) == 0) return Expr(op);
        size_t field = op->name.rfind('.', op->name.rfind('.') - 1);
        return Variable::make(op->type, op->param->name + op->name.substr(field), op->param);
    }

    Expr visit(const Call *op) override {
        Expr e = IRMutator::visit(op);
        const auto *c = e.as<Call>();
        if (c->call_type != Call::Func) return e;
        const FunctionContents *to = c->func.get();
        if (!to) {
            auto it = by_name.find(c->name);
            to = it == by_name.end() ? nullptr : it->second;
        }
        if (!to || to->name == c->name) return e;
        return Call::make(c->type, to->name, c->args, Call::Func, c->func, c->param, c->value_index);
    }
};

// The renamed Func a level or compute_with target made from a Func object
// points to, or null.
template<typename Ptr>
const FunctionContents *renamed_target(const OldNames &old, const Ptr &p) {
    auto f = p.lock();
    return f && old.count(f.get()) ? f.get() : nullptr;
}

// The input images the Funcs read, each once.
class FindImages : public IRVisitor {
public:
    std::vector<const ParameterContents *> images;

protected:
    void visit(const Call *op) override {
        IRVisitor::visit(op);
        if (op->call_type == Call::Image && op->param &&
            std::find(images.begin(), images.end(), op->param.get()) == images.end())
            images.push_back(op->param.get());
    }
};

}  // namespace

void make_names_unique(const std::vector<std::shared_ptr<FunctionContents>> &funcs) {
    std::map<std::string, std::vector<FunctionContents *>> by_name;
    for (const auto &f : funcs) by_name[f->name].push_back(f.get());
    // Checked before anything is renamed: a wrapper (or clone) for a
    // consumer named by two Funcs would take the calls of both.
    auto check_wrappers = [&](const std::string &kind, const std::string &owner,
                              const std::map<std::string, std::shared_ptr<FunctionContents>> &wrappers) {
        for (const auto &w : wrappers) {
            auto same = by_name.find(w.first);
            user_assert(same == by_name.end() || same->second.size() < 2)
                << kind << " " << owner << " has a wrapper " << w.second->name << " made by " << owner << "."
                << (w.second->wraps.empty() ? "clone_in(" : "in(") << w.first << "), but " << same->second.size()
                << " Funcs of the pipeline are named " << w.first
                << ", so it is unclear whose calls it takes; give those Funcs distinct names";
        }
    };
    FindImages images;
    for (const auto &f : funcs) {
        check_wrappers("Func", f->name, f->schedule.wrappers);
        for (int s = 0; s < f->num_stages(); s++) {
            for (const Expr &e : f->stage(s).values) images.include(e);
            for (const Expr &e : f->stage(s).args) images.include(e);
        }
    }
    for (const ParameterContents *p : images.images) check_wrappers("Input image", p->name, p->wrappers);
    OldNames old;
    for (auto &kv : by_name) {
        auto &same = kv.second;
        std::sort(same.begin(), same.end(),
                  [](const FunctionContents *a, const FunctionContents *b) { return a->serial < b->serial; });
        int k = 1;
        for (size_t i = 1; i < same.size(); i++) {
            std::string n;
            do {
                n = kv.first + "$" + std::to_string(k++);
            } while (by_name.count(n));
            old[same[i]] = kv.first;
            same[i]->name = n;
        }
    }
    if (old.empty()) return;
    bump_definition_epoch();
    for (const auto &kv : old)  // their output buffers (Func::output_buffer()) too
        for (size_t i = 0; i < kv.first->output_buffers.size(); i++)
            kv.first->output_buffers[i]->name = kv.first->buffer_name((int)i);
    for (const auto &f : funcs) {
        RenameCalls r(old, *f);
        for_each_definition_expr(*f, [&](Expr &e) { e = r.mutate(e); });
        for (const auto &p : f->output_buffers)
            for (DimConstraint &c : p->constraints)
                for (Expr *e : {&c.min, &c.extent, &c.stride})
                    if (e->defined()) *e = r.mutate(*e);
        for (int s = 0; s < f->num_stages(); s++)
            for (Prefetch &p : f->stage(s).schedule.prefetches) {
                if (const FunctionContents *t = renamed_target(old, p.target)) p.name = t->name;
                if (auto b = p.buffer.lock()) p.name = b->name;
            }
        if (auto w = f->wrapped_func.lock()) f->wraps = w->name;
        for (LoopLevel *l : {&f->schedule.compute_level, &f->schedule.store_level})
            if (const FunctionContents *t = renamed_target(old, l->func_contents())) l->rename_func(t->name);
        for (int s = 0; s < f->num_stages(); s++) {
            FuseLevel &l = f->stage(s).schedule.fuse_with;
            if (const FunctionContents *t = renamed_target(old, l.target)) l.func = t->name;
        }
    }
}

}  // namespace internal
}  // namespace kiln
