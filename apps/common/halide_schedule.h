// The same .sched file on both sides of a differential test: Kiln applies it
// with ScheduleFile::apply, and halide_apply() makes the same calls on the
// Halide 14 Funcs of the test, so that "the equivalent schedule" is not a
// second hand-written copy that could drift from the file.
//
//   kiln::ScheduleFile s = kiln::ScheduleFile::load(".../softmax/fused.sched");
//   kd::halide_apply(s, {{"output", out}, {"row_max", row_max}, ...}, {{"r", r}});
//
// Each directive becomes the Halide method of the same name. Integer
// arguments are evaluated as Kiln evaluates them for the host target
// (natural_vector_size of the Func's type, arithmetic), the target both
// libraries run on here. A name is an RVar
// if the test maps it to one (the RDom of a stage: "r", "r.x") or if it was
// split from one; any other loop name is a Var. Halide finds the dimensions
// of a stage by these names, as Kiln does.
#pragma once
#include <kiln/ScheduleFile.h>
#include <kiln/kiln.h>

#include "schedule/ScheduleSyntax.h"

#include "Halide.h"

#include <map>
#include <set>
#include <stdexcept>
#include <string>

namespace kd {

// Every directive of `file` applied to `funcs` (by Func name); `rvars` maps
// the RDom names the file uses to Halide's RVars; `images` the input images
// a directive may name (prefetch(input, ...)).
// An rfactor directive adds its intermediate to the Funcs by the name the
// file gives it, a wrapper stanza its wrapper (f_in, f_in_g), for the later
// stanzas. A wrapper stanza ("B.in(matmul):")
// schedules funcs["B"].in(funcs["matmul"]); an input read through a wrapper
// is given as a Func over its buffer (Halide::Func(buffer)). A
// specialization stanza ("output.specialize(B.width >= 32):") schedules
// f.specialize(cond), the names of its condition taken from `values`
// ({"B.width", Expr(B.width())}, ...).
inline void halide_apply(const kiln::ScheduleFile &file, std::map<std::string, Halide::Func> funcs,
                         const std::map<std::string, Halide::RVar> &rvars = {},
                         const std::map<std::string, Halide::Expr> &values = {},
                         const std::map<std::string, Halide::ImageParam> &images = {}) {
    using Halide::TailStrategy;
    auto fail = [&](const kiln::ScheduleDirective &d, const std::string &why) {
        throw std::runtime_error(file.filename() + ":" + std::to_string(d.line) + ": " + d.name + ": " + why);
    };
    auto func = [&](const std::string &name, const kiln::ScheduleDirective &d) {
        auto it = funcs.find(name);
        if (it == funcs.end()) fail(d, "the test gives no Halide Func named '" + name + "'");
        return it->second;
    };
    std::set<std::string> split_rvars;  // loops split or fused from an RVar
    for (const kiln::ScheduleStanza &s : file.stanzas()) {
        kiln::ScheduleDirective header;
        header.name = s.func;
        header.line = s.line;
        Halide::Func f = func(s.func, header);
        if (s.wrapper) {  // "f.in(g, h):" / "f.in():" / "f.clone_in(g):", as Kiln makes them
            std::vector<Halide::Func> of;
            for (const std::string &g : s.wrapper_of) of.push_back(func(g, header));
            if (s.clone) f = of.size() == 1 ? f.clone_in(of[0]) : f.clone_in(of);
            else f = of.empty() ? f.in() : of.size() == 1 ? f.in(of[0]) : f.in(of);
            std::string as_written = s.func + (s.clone ? "_clone_in" : "_in");  // how later stanzas name it, as in Kiln
            for (const std::string &g : s.wrapper_of) as_written += "_" + g;
            funcs.emplace(as_written, f);
        }
        Halide::Stage st = s.stage < 0 ? Halide::Stage(f) : f.update(s.stage);
        if (!s.condition.empty()) {  // comparisons joined by && (ScheduleParser.cpp)
            namespace ks = kiln::internal::sched;
            std::vector<ks::Token> toks = ks::lex(s.condition, file.filename(), s.line, s.col);
            auto operand = [&](const ks::Arg &a) -> Halide::Expr {
                if (!a.is_name()) return ks::evaluate(a, kiln::Target::host(), kiln::Float(32), file.filename());
                auto v = values.find(a.name);
                if (v == values.end()) fail(header, "the test gives no value for '" + a.name + "'");
                return v->second;
            };
            Halide::Expr all;
            for (size_t pos = 0;;) {
                Halide::Expr l = operand(ks::parse_arg(toks, pos, file.filename(), "specialize"));
                const std::string op = toks[pos++].text;
                Halide::Expr r = operand(ks::parse_arg(toks, pos, file.filename(), "specialize"));
                Halide::Expr c = op == ">=" ? l >= r : op == ">" ? l > r : op == "<=" ? l <= r : op == "<" ? l < r
                               : op == "==" ? l == r : l != r;
                all = all.defined() ? all && c : c;
                if (toks[pos].text != "&&") break;
                pos++;
            }
            st = s.stage < 0 ? f.specialize(all) : f.update(s.stage).specialize(all);
        }
        for (const kiln::ScheduleDirective &d : s.directives) {
            const std::vector<std::string> &a = d.args;
            auto loop = [&](size_t i) -> Halide::VarOrRVar {
                auto r = rvars.find(a.at(i));
                if (r != rvars.end()) return r->second;
                if (split_rvars.count(a.at(i))) return Halide::RVar(a.at(i));
                return Halide::Var(a.at(i));
            };
            // New loops made from `from`: RVars if it is one.
            auto made = [&](size_t i, size_t from) -> Halide::VarOrRVar {
                if (!loop(from).is_rvar) return Halide::Var(a.at(i));
                split_rvars.insert(a.at(i));
                return Halide::RVar(a.at(i));
            };
            // An integer argument, evaluated by Kiln's own rules for the
            // host (natural_vector_size of the Func's type, arithmetic),
            // which is the target both sides run on.
            auto num = [&](size_t i) {
                Halide::Type ht = f.output_types()[0];  // of a Tuple: its widest element
                for (const Halide::Type &e : f.output_types()) ht = e.bits() > ht.bits() ? e : ht;
                kiln::Type t = ht.is_float() ? kiln::Float(ht.bits()) : ht.is_uint() ? kiln::UInt(ht.bits()) : kiln::Int(ht.bits());
                namespace ks = kiln::internal::sched;
                return ks::evaluate(ks::parse_arg_text(a.at(i), file.filename(), d.arg_lines.at(i), d.arg_cols.at(i)),
                                    kiln::Target::host(), t, file.filename());
            };
            auto tail = [&](size_t i) {
                if (i >= a.size() || a[i] == "Auto") return TailStrategy::Auto;
                if (a[i] == "GuardWithIf") return TailStrategy::GuardWithIf;
                if (a[i] == "ShiftInwards") return TailStrategy::ShiftInwards;
                if (a[i] == "RoundUp") return TailStrategy::RoundUp;
                fail(d, "unknown tail strategy " + a[i]);
                return TailStrategy::Auto;
            };
            auto align = [&](size_t i) {
                using Halide::LoopAlignStrategy;
                if (i >= a.size() || a[i] == "Auto") return LoopAlignStrategy::Auto;
                if (a[i] == "AlignStart") return LoopAlignStrategy::AlignStart;
                if (a[i] == "AlignEnd") return LoopAlignStrategy::AlignEnd;
                if (a[i] == "NoAlign") return LoopAlignStrategy::NoAlign;
                fail(d, "unknown loop alignment " + a[i]);
                return LoopAlignStrategy::Auto;
            };
            const std::string &n = d.name;
            if (n == "split") {
                st.split(loop(0), made(1, 0), made(2, 0), num(3), tail(4));
            } else if (n == "fuse") {
                st.fuse(loop(0), loop(1), made(2, 0));
            } else if (n == "reorder") {
                std::vector<Halide::VarOrRVar> v;
                for (size_t i = 0; i < a.size(); i++) v.push_back(loop(i));
                st.reorder(v);
            } else if (n == "tile" && a.size() >= 8) {
                st.tile(loop(0), loop(1), made(2, 0), made(3, 1), made(4, 0), made(5, 1), num(6), num(7), tail(8));
            } else if (n == "tile") {
                st.tile(loop(0), loop(1), made(2, 0), made(3, 1), num(4), num(5), tail(6));
            } else if (n == "vectorize") {
                a.size() == 1 ? st.vectorize(loop(0)) : st.vectorize(loop(0), num(1), tail(2));
            } else if (n == "unroll") {
                a.size() == 1 ? st.unroll(loop(0)) : st.unroll(loop(0), num(1), tail(2));
            } else if (n == "parallel") {
                a.size() == 1 ? st.parallel(loop(0)) : st.parallel(loop(0), num(1), tail(2));
            } else if (n == "serial") {
                st.serial(loop(0));
            } else if (n == "compute_root" || (n == "compute_at" && a.size() == 1)) {
                f.compute_root();
            } else if (n == "compute_at") {
                f.compute_at(func(a[0], d), Halide::Var(a[1]));
            } else if (n == "compute_inline") {
                f.compute_inline();
            } else if (n == "store_root" || (n == "store_at" && a.size() == 1)) {
                f.store_root();
            } else if (n == "store_at") {
                f.store_at(func(a[0], d), Halide::Var(a[1]));
            } else if (n == "compute_with") {
                if (a.size() <= 3) {
                    st.compute_with(func(a[0], d), Halide::Var(a[1]), align(2));
                } else {  // loop, strategy pairs
                    std::vector<std::pair<Halide::VarOrRVar, Halide::LoopAlignStrategy>> dims;
                    for (size_t i = 2; i + 1 < a.size(); i += 2) dims.push_back({loop(i), align(i + 1)});
                    st.compute_with(func(a[0], d), Halide::Var(a[1]), dims);
                }
            } else if (n == "rfactor") {
                std::vector<std::pair<Halide::RVar, Halide::Var>> preserved;
                for (size_t i = 0; i + 1 < a.size(); i += 2) preserved.push_back({loop(i).rvar, Halide::Var(a[i + 1])});
                funcs[a.back()] = st.rfactor(preserved);
            } else if (n == "bound") {
                f.bound(Halide::Var(a[0]), num(1), num(2));
            } else if (n == "align_bounds") {
                f.align_bounds(Halide::Var(a[0]), num(1), a.size() > 2 ? num(2) : 0);
            } else if (n == "fold_storage") {
                f.fold_storage(Halide::Var(a[0]), num(1), a.size() < 3 || a[2] == "true");
            } else if (n == "reorder_storage") {
                std::vector<Halide::Var> dims;
                for (const std::string &v : a) dims.push_back(Halide::Var(v));
                f.reorder_storage(dims);
            } else if (n == "prefetch") {  // of an input image or a Func, with Kiln's defaults
                using Halide::PrefetchBoundStrategy;
                Halide::Expr offset = a.size() > 3 ? Halide::Expr(num(3)) : Halide::Expr(1);
                PrefetchBoundStrategy way = a.size() < 5 || a[4] == "GuardWithIf" ? PrefetchBoundStrategy::GuardWithIf
                                            : a[4] == "Clamp"                      ? PrefetchBoundStrategy::Clamp
                                                                                   : PrefetchBoundStrategy::NonFaulting;
                auto img = images.find(a[0]);
                if (img != images.end()) st.prefetch(img->second, loop(1), loop(2), offset, way);
                else st.prefetch(func(a[0], d), loop(1), loop(2), offset, way);
            } else {
                fail(d, "the differential tests do not translate this directive to Halide yet");
            }
        }
    }
}

}  // namespace kd
