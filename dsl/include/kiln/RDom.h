// RDom: a multi-dimensional reduction domain; RVar: one of its dimensions.
//
// An update definition that uses an RDom loops over the domain, first
// dimension innermost, in lexicographic order. where(cond) restricts the
// domain to the points where cond holds (the update is guarded by it).
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "Expr.h"

namespace kiln {

namespace internal {
struct ReductionVariable {
    std::string name;
    Expr min, extent;
    // Made by autodiff for the points a clamp sends to one of its ends
    // (autodiff/Gather.h): the reader's overhang beyond the clamped range,
    // a stencil's reach when the output covers the input, and the whole
    // range of a later clamped dimension summed with it (an edge's sum
    // taking its corners). Its loop runs a few times, or holds one that
    // does, so lowering leaves it whole (partition_loops).
    bool boundary_tail = false;
};
struct ReductionDomainContents {
    std::string name;
    std::vector<ReductionVariable> vars;
    Expr predicate;  // conjunction of where() conditions; undefined = true
};
}  // namespace internal

class RVar {
public:
    RVar() = default;
    RVar(std::shared_ptr<internal::ReductionDomainContents> d, int i) : dom(std::move(d)), index(i) {}
    explicit RVar(const std::string &name);  // a free-standing name, used in schedules
    const std::string &name() const;
    Expr min() const;
    Expr extent() const;
    operator Expr() const;
    const std::shared_ptr<internal::ReductionDomainContents> &domain() const { return dom; }

private:
    std::shared_ptr<internal::ReductionDomainContents> dom;
    int index = 0;
    std::string free_name;
};

class RDom {
public:
    RDom() = default;
    // A 1-D domain [min, min + extent).
    RDom(Expr min, Expr extent, const std::string &name = "");
    // Several dimensions: {{min0, extent0}, {min1, extent1}, ...}.
    RDom(const std::vector<std::pair<Expr, Expr>> &region, const std::string &name = "");
    RDom(Expr min0, Expr extent0, Expr min1, Expr extent1, const std::string &name = "");
    RDom(Expr min0, Expr extent0, Expr min1, Expr extent1, Expr min2, Expr extent2,
         const std::string &name = "");

    int dimensions() const;
    RVar operator[](int i) const;
    // Restrict the domain; may be called several times (conditions are and-ed).
    // The condition must be boolean, as select()'s.
    RDom &where(Expr predicate);
    const std::string &name() const;
    operator Expr() const;  // 1-D domains only
    operator RVar() const;  // 1-D domains only
    bool defined() const { return contents != nullptr; }
    const std::shared_ptr<internal::ReductionDomainContents> &get() const { return contents; }

    RVar x, y, z, w;

private:
    void init(const std::vector<std::pair<Expr, Expr>> &region, const std::string &name);
    std::shared_ptr<internal::ReductionDomainContents> contents;
};

}  // namespace kiln
