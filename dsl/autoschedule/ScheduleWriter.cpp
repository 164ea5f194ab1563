// The schedule text of the autoscheduler's States (SearchSpace.h): each
// Func's placement and its group's loops as .sched stanzas.
//
//   place[blur_x] = Sliding in group blur_y, structure[blur_y] = Rows of 16
//     ->  blur_y: split(y, yo, yi, 16) vectorize(x, natural_vector_size) parallel(yo)
//         blur_x: compute_at(blur_y, yi) store_at(blur_y, yo) vectorize(x, natural_vector_size)
#include <algorithm>
#include <set>
#include <sstream>

#include "SearchSpace.h"
#include "ir/Function.h"

namespace kiln {
namespace internal {

namespace {

// A name made of a loop's name ("r.x" -> "r_x").
std::string identifier(std::string s) {
    std::replace(s.begin(), s.end(), '.', '_');
    return s;
}

}  // namespace

int block_rows(const FuncInfo &f, int strip) {
    int rows = std::max(1, f.lanes * 3 / 4);
    if (strip > 0)
        while (strip % rows) rows--;
    return rows;
}

Structure initial_structure(const FuncInfo &f) {
    Structure s;
    if (f.args.size() >= 2 && f.extent[1] >= 16) s = {Structure::Rows, 0, 16};
    else if (f.args.size() == 1 && f.extent[0] >= 128 * f.lanes) s = {Structure::Strips, 64 * f.lanes, 0};
    return s;
}

std::pair<std::string, std::string> ScheduleWriter::loops_for(const std::string &r, const Structure &s, Place p) const {
    const FuncInfo &f = info.at(r);
    if (f.args.empty()) return {"", ""};  // a 0-D group root: no loop to compute anything in
    std::string x = f.args[0], y = f.args.size() > 1 ? f.args[1] : "";
    if (p == Place::Vector) {  // the vectorized loop, outside the channels
        if (!s.channels_inner) return {"", ""};
        return {s.kind == Structure::Rows ? x : x + "i", ""};
    }
    switch (s.kind) {
    case Structure::Rows:
        if (p == Place::Inner) return {y + "i", ""};
        if (p == Place::Sliding) return {y + "i", y + "o"};
        return {y + "o", ""};
    case Structure::Tiles:
        if (p == Place::Inner) return {x, ""};
        if (p == Place::Sliding) return {x, y};
        return {y, ""};
    case Structure::Strips:
        if (p == Place::Inner) return {x + "o", ""};
        return {"", ""};
    case Structure::Columns:  // per row of a strip, sliding down it, per strip
        if (p == Place::Inner) return {y, ""};
        if (p == Place::Sliding) return {y, x + "o"};
        return {x + "o", ""};
    case Structure::Blocks:  // per block (the inner of the two loops), per row or column of blocks
        if (p == Place::Inner) return {s.rows_outer ? x + "o" : y + "o", ""};
        if (p == Place::Outer) return {s.rows_outer ? y + "o" : x + "o", ""};
        return {"", ""};
    default: return {"", ""};
    }
}

bool ScheduleWriter::follows_loop(const FuncInfo &f, const Structure &s, Place p) {
    if (p == Place::Vector) return f.follows.count(0) != 0;
    switch (s.kind) {
    case Structure::Tiles: return f.follows.count(0) || f.follows.count(1);
    case Structure::Strips: return f.follows.count(0) != 0;
    case Structure::Columns: return f.follows.count(p == Place::Outer ? 0 : 1) != 0;
    case Structure::Blocks:  // the inner of the two loops of blocks, or the outer
        return f.follows.count((p == Place::Outer) == s.rows_outer ? 1 : 0) != 0;
    default: return f.follows.count(1) != 0;
    }
}

// The directives vectorizing (and for a root, parallelizing) the update
// stages of f: its innermost dimension innermost and vectorized when it
// is a pure variable of the update and f has another dimension.
std::vector<std::string> ScheduleWriter::update_stanzas(const FuncInfo &fi, bool root, bool serial) const {
    std::vector<std::string> lines;
    if (fi.args.empty()) return lines;  // a 0-D Func: no loops to reorder, vectorize or parallelize
    const FunctionContents &f = *env.at(fi.name);
    for (size_t k = 0; k < f.updates.size(); k++) {
        const Definition &d = f.updates[k];
        std::vector<std::string> pure;
        std::set<std::string> small;  // pure dimensions of at most 4 points
        for (size_t i = 0; i < d.args.size() && i < fi.args.size(); i++) {
            const auto *v = d.args[i].as<Variable>();
            if (!v || v->name != fi.args[i]) continue;
            pure.push_back(fi.args[i]);
            if (fi.extent[i] <= 4) small.insert(fi.args[i]);
        }
        if (serial) {
            // Serial over its RVars, the small dimensions innermost and
            // unrolled (one point's values computed and stored together),
            // at the root the outermost other pure dimension in parallel.
            // Unrolled by their extent at the sizes searched: a dimension
            // whose extent follows an input's (max_filter's channels) is not
            // a constant loop, which unroll(c) alone needs; guarded, since
            // other sizes may not divide.
            std::string order, unroll, outer;
            for (size_t i = 0; i < fi.args.size(); i++)
                if (small.count(fi.args[i]))
                    unroll += " unroll(" + fi.args[i] + ", " + std::to_string(fi.extent[i]) + ", GuardWithIf)";
            for (const std::string &v : small) order += (order.empty() ? "" : ", ") + v;
            for (const Dim &dim : d.schedule.dims)
                if (!small.count(dim.user_name)) order += (order.empty() ? "" : ", ") + dim.user_name;
            for (const std::string &v : pure)
                if (!small.count(v)) outer = v;
            lines.push_back(fi.name + ".update(" + std::to_string(k) + "): reorder(" + order + ")" + unroll +
                            (!root || outer.empty() ? "" : " parallel(" + outer + ")"));
            continue;
        }
        std::string dirs;
        const std::string &x = fi.args[0];
        bool vec = fi.args.size() >= 2 && fi.extent[0] >= fi.lanes && std::count(pure.begin(), pure.end(), x);
        if (vec) {
            // x innermost, unless it is the update's only loop (a row's
            // update, f(x, 0) = ...: reorder takes two loops or more).
            std::string reorder;
            for (const Dim &dim : d.schedule.dims)
                if (dim.user_name != x) reorder += ", " + dim.user_name;
            if (!reorder.empty()) dirs += "reorder(" + x + reorder + ") ";
            // GuardWithIf: an update's RoundUp tail would read its producers past their regions.
            dirs += "vectorize(" + x + ", natural_vector_size, GuardWithIf)";
        }
        if (root) {
            std::string outer;
            for (const std::string &v : pure)
                if (v != x || pure.size() == 1) outer = v;
            if (!outer.empty() && !(vec && outer == x)) dirs += std::string(dirs.empty() ? "" : " ") + "parallel(" + outer + ")";
        }
        if (!dirs.empty()) lines.push_back(fi.name + ".update(" + std::to_string(k) + "): " + dirs);
    }
    return lines;
}

// The loops of register blocks (Structure::Blocks) of f: blocks of s.tx
// vectors by s.ty rows, each block's rows and vectors unrolled, columns
// (or rows) of blocks outermost.
std::string ScheduleWriter::block_loops(const FuncInfo &f, const Structure &s) {
    const std::string &x = f.args[0], &y = f.args[1];
    const std::string inner = s.rows_outer ? x + "o, " + y + "o" : y + "o, " + x + "o";
    return "split(" + x + ", " + x + "o, " + x + "i, natural_vector_size*" + std::to_string(s.tx) + ") split(" + y +
           ", " + y + "o, " + y + "i, " + std::to_string(s.ty) + ") reorder(" + x + "i, " + y + "i, " + inner +
           ") vectorize(" + x + "i, natural_vector_size) unroll(" + x + "i) unroll(" + y + "i)";
}

// The stanza of the wrapper of matrix product f (State::wrapped): at the
// root, columns of its blocks in parallel, or per strip of its group.
std::string ScheduleWriter::wrapper_directives(const State &s, const FuncInfo &f) const {
    const FuncInfo &w = info.at(f.wrapper);
    const Structure &st = s.structure.at(w.name);
    if (s.place.at(w.name) == Place::Root) return "compute_root() " + root_directives(w, st);
    const std::string &g = s.group.at(w.name);
    return "compute_at(" + g + ", " + loops_for(g, s.structure.at(g), s.place.at(w.name)).first + ") " +
           block_loops(w, st);
}

std::pair<std::string, std::string> ScheduleWriter::pack_site(const State &s, const FuncInfo &f) const {
    if (f.pack_operand.empty() || s.place_of(f.name) != Place::Inner || !s.group.count(f.name)) return {"", ""};
    const std::string &g = s.group.at(f.name);
    if (f.block_root != g && !s.wrapped.count(f.name)) return {"", ""};
    const Structure &st = s.structure.at(g);
    if (st.kind != Structure::Blocks || st.rows_outer || s.place_of(g) != Place::Root) return {"", ""};
    return {g, loops_for(g, st, Place::Outer).first};
}

std::string ScheduleWriter::pack_stanza(const State &s, const FuncInfo &f) const {
    auto [g, loop] = pack_site(s, f);
    return f.pack_operand + ".in(" + f.name + "): compute_at(" + g + ", " + loop + ") vectorize(" + f.pack_var +
           ", natural_vector_size)";
}

std::vector<size_t> ScheduleWriter::small_dims(const FuncInfo &f) {
    std::vector<size_t> dims;
    for (size_t i = 2; i < f.args.size() && i < f.extent.size(); i++)
        if (f.extent[i] <= 4) dims.push_back(i);
    return dims;
}

// Structure::channels_inner: f's small dimensions innermost (before
// `loops`, the structure's loops of x and y, innermost first), each unrolled
// by its extent at the sizes searched (guarded: other sizes may not divide).
std::string ScheduleWriter::channel_loops(const FuncInfo &f, const Structure &s, const std::string &loops) {
    if (!s.channels_inner) return "";
    const std::vector<size_t> small = small_dims(f);
    std::string order, unroll, rest;
    for (size_t i : small) {
        order += f.args[i] + ", ";
        unroll += " unroll(" + f.args[i] + ", " + std::to_string(f.extent[i]) + ", GuardWithIf)";
    }
    for (size_t i = 2; i < f.args.size(); i++)
        if (std::find(small.begin(), small.end(), i) == small.end()) rest += ", " + f.args[i];
    return " reorder(" + order + loops + rest + ")" + unroll;
}

std::string ScheduleWriter::root_directives(const FuncInfo &f, const Structure &s) const {
    if (s.bare || f.args.empty()) return "";  // a 0-D Func has no loops
    std::string x = f.args[0], y = f.args.size() > 1 ? f.args[1] : "";
    bool vec = f.extent[0] >= f.lanes;
    std::string v = vec ? " vectorize(" + x + "i, natural_vector_size)" : "";
    switch (s.kind) {
    case Structure::Rows:
        return "split(" + y + ", " + y + "o, " + y + "i, " + std::to_string(s.ty) + ")" +
               channel_loops(f, s, x + ", " + y + "i, " + y + "o") +
               (vec ? " vectorize(" + x + ", natural_vector_size)" : "") + " parallel(" + y + "o)";
    case Structure::Tiles:
        return "tile(" + x + ", " + y + ", " + x + "i, " + y + "i, " + std::to_string(s.tx) + ", " +
               std::to_string(s.ty) + ")" + channel_loops(f, s, x + "i, " + y + "i, " + x + ", " + y) + v +
               " parallel(" + y + ")";
    case Structure::Strips:
        return "split(" + x + ", " + x + "o, " + x + "i, " + std::to_string(s.tx) + ")" + v + " parallel(" + x + "o)";
    case Structure::Columns: {  // strips of columns outermost, each down all its rows
        const std::string loops = x + "i, " + y + ", " + x + "o", channels = channel_loops(f, s, loops);
        return "split(" + x + ", " + x + "o, " + x + "i, " + std::to_string(s.tx) + ")" +
               (channels.empty() ? " reorder(" + loops + ")" : channels) + v + " parallel(" + x + "o)";
    }
    case Structure::Blocks:  // the outer loop of blocks in parallel
        return block_loops(f, s) + " parallel(" +
               (f.args.size() > 2 ? f.args.back() : s.rows_outer ? y + "o" : x + "o") + ")";
    default: {
        std::string d = vec ? "vectorize(" + x + ", natural_vector_size)" : "";
        if (f.args.size() >= 2 && !s.serial) d += std::string(d.empty() ? "" : " ") + "parallel(" + f.args.back() + ")";
        return d;
    }
    }
}

std::string ScheduleWriter::render(const State &s, const std::map<std::string, std::string> *why) const {
    std::ostringstream os;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        const FuncInfo &f = info.at(*it);
        Place p = s.place_of(f.name);
        // The packing comment only where the blocks have panels to pack
        // per (a later choice of loops may have taken them).
        const bool panels = !pack_site(s, f).first.empty(), packs = panels && s.packed.count(f.name);
        if (why)
            for (const char *kind : decision_kinds)
                if (why->count(kind + f.name) && (panels || std::string(kind) != "packing:"))
                    os << "# " << f.name << ": " << why->at(kind + f.name) << "\n";
        if (p == Place::Inline) continue;
        std::string dirs;
        bool block = false;  // a matrix product computed per register block of its group
        if (p == Place::Root) {
            dirs = (f.output ? "" : "compute_root() ") + root_directives(f, s.structure.at(f.name));
        } else {
            const std::string &g = s.group.at(f.name);
            auto [at, store] = loops_for(g, s.structure.at(g), p);
            dirs = "compute_at(" + g + ", " + at + ")";
            if (!store.empty()) dirs += " store_at(" + g + ", " + store + ")";
            block = !f.matrix_rvar.empty() && (f.block_root == g || s.wrapped.count(f.name)) &&
                    p == Place::Inner && s.structure.at(g).kind == Structure::Blocks;
            if (s.wrapped.count(f.name)) os << f.name << ".in(): " << wrapper_directives(s, f) << "\n";
            if (block)  // one register block: its vectors and rows unrolled, the RVar outermost
                dirs += " vectorize(" + f.args[0] + ", natural_vector_size) unroll(" + f.args[0] + ") unroll(" +
                        f.args[1] + ")";
            else if (f.args.size() >= 2 && f.extent[0] >= f.lanes)  // a 1-D Func in a group: a row's reduction
                dirs += " vectorize(" + f.args[0] + ", natural_vector_size)";
        }
        while (!dirs.empty() && dirs.back() == ' ') dirs.pop_back();
        if (!dirs.empty()) os << f.name << ": " << dirs << "\n";
        if (block) {
            const std::string &x = f.args[0], &y = f.args[1];
            os << f.name << ".update(0): reorder(" << x << ", " << y << ", " << f.matrix_rvar << ") vectorize(" << x
               << ", natural_vector_size) unroll(" << x << ") unroll(" << y << ")\n";
            if (packs) os << pack_stanza(s, f) << "\n";
        } else if (s.rfactored.count(f.name)) {
            // f.update(0) splits its RVar into vector lanes, summed by an
            // intermediate computed per point of f (one row's lanes). Not
            // where f is: per strip of rows its lanes would be stored
            // (row, lane), the row innermost, and each vector of lanes a
            // scatter and a gather at a stride of the strip's height.
            std::string r = f.rvar, base = identifier(r), lanes = f.name + "_lanes", u = f.args[0] == "u" ? "u_" : "u";
            os << f.name << ".update(0): split(" << r << ", " << base << "o, " << base << "i, natural_vector_size) rfactor("
               << base << "i, " << u << ", " << lanes << ")\n"
               << lanes << ": compute_at(" << f.name << ", " << f.args[0] << ") vectorize(" << u << ")\n"
               << lanes << ".update(0): reorder(" << u << ", " << base << "o) vectorize(" << u << ")\n";
        } else if (p != Place::Root || !s.structure.at(f.name).bare) {
            bool parallel = p == Place::Root && !s.structure.at(f.name).serial;
            for (const std::string &u : update_stanzas(f, parallel, s.serial_updates.count(f.name)))
                os << u << "\n";
        }
    }
    return os.str();
}

std::string ScheduleWriter::option_name(const State &s, const std::string &f, Place p) const {
    if (p == Place::Inline) return "inline";
    if (p == Place::Root) return "compute_root";
    const std::string &g = s.group.at(f);
    auto [at, store] = loops_for(g, s.structure.at(g), p);
    return "compute_at(" + g + ", " + at + ")" + (store.empty() ? "" : " store_at(" + g + ", " + store + ")");
}

}  // namespace internal
}  // namespace kiln
