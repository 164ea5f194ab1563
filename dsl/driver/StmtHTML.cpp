// stmt_html: the loop nest, the fusion report and the emitted C++ of a
// pipeline on one HTML page (see StmtHTML.h and docs/stmt-html.md).
#include "StmtHTML.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "codegen/CNames.h"
#include "ir/IRPrinter.h"
#include "kiln/StmtHTML.h"

// The page's style sheet and script, embedded at build time by cmake/KilnEmbed.cmake.
extern const char kiln_embedded_stmt_html_css[];
extern const char kiln_embedded_stmt_html_js[];

namespace kiln {

std::string html_escape(const std::string &s) {
    std::string r;
    r.reserve(s.size());
    for (char c : s) {
        switch (c) {
        case '&': r += "&amp;"; break;
        case '<': r += "&lt;"; break;
        case '>': r += "&gt;"; break;
        case '"': r += "&quot;"; break;
        case '\'': r += "&#39;"; break;
        default: r += c;
        }
    }
    return r;
}

namespace internal {

namespace {

std::string escape(const std::string &s) { return html_escape(s); }

std::string grouped(int64_t v) {  // 884736 -> "884,736"
    std::string d = std::to_string(v < 0 ? -v : v), r;
    for (size_t i = 0; i < d.size(); i++) {
        if (i && (d.size() - i) % 3 == 0) r += ',';
        r += d[i];
    }
    return (v < 0 ? "-" : "") + r;
}

std::string human_bytes(int64_t b) {  // decimal units, as the text report
    char s[32];
    if (b < 1000) std::snprintf(s, sizeof(s), "%lld B", (long long)b);
    else if (b < 1000000) std::snprintf(s, sizeof(s), "%.1f KB", b / 1e3);
    else if (b < 1000000000) std::snprintf(s, sizeof(s), "%.1f MB", b / 1e6);
    else std::snprintf(s, sizeof(s), "%.2f GB", b / 1e9);
    return s;
}

// One colour per buffer: the report's Funcs in realization order, then the
// input images in greys, then any other buffer met on the way.
class Palette {
public:
    void add(const std::string &name, bool input) {
        if (index.count(name)) return;
        index[name] = (int)order.size();
        order.push_back({name, input});
    }
    // "c3", or "" for a name that is no buffer.
    std::string cls(const std::string &name) const {
        auto it = index.find(name);
        return it == index.end() ? "" : "c" + std::to_string(it->second);
    }
    // The buffer a dotted name belongs to ("blur_x.s0.x" -> "blur_x"): the
    // longest buffer name that is a prefix followed by '.'.
    std::string owner(const std::string &name) const {
        for (size_t p = name.rfind('.'); p != std::string::npos && p > 0; p = name.rfind('.', p - 1)) {
            if (index.count(name.substr(0, p))) return name.substr(0, p);
        }
        return index.count(name) ? name : "";
    }
    std::string css() const {
        static const char *funcs[] = {"#2563eb", "#ea580c", "#16a34a", "#9333ea", "#dc2626", "#0d9488",
                                      "#db2777", "#ca8a04", "#4f46e5", "#92400e", "#0891b2", "#65a30d"};
        static const char *inputs[] = {"#64748b", "#78716c", "#52525b"};
        std::string r;
        int nf = 0, ni = 0;
        for (size_t i = 0; i < order.size(); i++) {
            std::string c = order[i].second ? inputs[ni++ % 3] : funcs[nf++ % 12];
            r += ".c" + std::to_string(i) + "{--fc:" + c + ";--ft:" + c + "14;--fb:" + c + "66}\n";
        }
        return r;
    }
    std::string legend() const {
        std::string r;
        for (const auto &o : order) {
            r += "<span class=\"chip " + cls(o.first) + (o.second ? " in\" title=\"input\"" : "\"") + " data-f=\"" +
                 escape(o.first) + "\">" + escape(o.first) + "</span>";
        }
        return r;
    }

private:
    std::map<std::string, int> index;
    std::vector<std::pair<std::string, bool>> order;
};

// IRPrinter's text with every Load marked: \1name\2 index \3.
class MarkedPrinter : public IRPrinter {
public:
    using IRPrinter::IRPrinter;

protected:
    void visit(const Load *op) override {
        os << '\1' << op->name << '\2';
        include(op->index);
        os << '\3';
    }
};

struct ExprText {
    std::string html, text;
};

ExprText render(const Expr &e, const Palette &pal) {
    std::ostringstream ss;
    MarkedPrinter(ss).print(e);
    std::string m = ss.str();
    ExprText r;
    for (size_t i = 0; i < m.size(); i++) {
        char c = m[i];
        if (c == '\1') {
            size_t j = m.find('\2', i);
            std::string name = m.substr(i + 1, j - i - 1);
            r.html += "<span class=\"ld " + pal.cls(name) + "\"><b>" + escape(name) + "</b>[";
            r.text += name + "[";
            i = j;
        } else if (c == '\3') {
            r.html += "]</span>";
            r.text += "]";
        } else {
            r.html += escape(std::string(1, c));
            r.text += c;
        }
    }
    return r;
}

// An expression in a header (loop bounds, conditions): abbreviated as text.
std::string short_expr(const Expr &e, const Palette &pal, size_t max = 60) {
    ExprText t = render(e, pal);
    if (t.text.size() <= max) return t.html;
    return "<span class=\"abbr\" title=\"" + escape(t.text) + "\">" + escape(t.text.substr(0, max - 1)) +
           "&hellip;</span>";
}

std::string name_html(const std::string &name, const Palette &pal, const char *cls) {
    std::string f = pal.owner(name);
    return "<span class=\"" + std::string(cls) + (f.empty() ? "" : " " + pal.cls(f)) + "\">" + escape(name) + "</span>";
}

// Vectorized and unrolled loops of the nest before vectorization, each
// filed under the nearest enclosing loop that survives ("" at the top).
class FoldedLoops : public IRVisitor {
public:
    std::map<std::string, std::vector<std::string>> badges;  // surviving loop -> badge html
    std::set<std::string> vectorized;  // a loop of this name in the final nest is a scalar fallback

    explicit FoldedLoops(const Palette &p) : pal(p) {}

protected:
    void visit(const For *op) override {
        bool folded = op->for_type == ForType::Vectorized || op->for_type == ForType::Unrolled;
        if (folded) {
            bool vec = op->for_type == ForType::Vectorized;
            if (vec) vectorized.insert(op->name);
            std::string text = to_string(op->extent), owner = pal.owner(op->name);
            std::string label = op->name.substr(owner.empty() ? 0 : owner.size() + 1);
            std::string title = op->name + (vec ? ": vectorized loop, now vector operations of " + text + " lanes here"
                                                : ": unrolled loop, now " + text + " copies of its body here");
            badges[anchor].push_back("<span class=\"kind " + std::string(vec ? "k-vec" : "k-unr") + "\" title=\"" +
                                     escape(title) + "\">" + (vec ? "vectorized " : "unrolled ") + escape(label) +
                                     " &times;" + escape(text) + "</span>");
            IRVisitor::visit(op);
            return;
        }
        std::string saved = anchor;
        anchor = op->name;
        IRVisitor::visit(op);
        anchor = saved;
    }

private:
    const Palette &pal;
    std::string anchor;
};

// The C++ lines of each loop variable and of each "// produce f" comment.
struct CppIndex {
    std::vector<std::string> lines;
    size_t kernel_start = 0;                                  // index of `extern "C" int NAME(`
    std::map<std::string, std::vector<int>> loops, produces;  // -> 1-based line numbers, in order
    std::map<int, std::string> block_of_line;                 // line -> nest block id (set while rendering)

    CppIndex(const std::string &cpp, const std::string &fn) {
        std::istringstream ss(cpp);
        for (std::string l; std::getline(ss, l);) lines.push_back(l);
        std::string head = "extern \"C\" int " + fn + "(";
        while (kernel_start < lines.size() && lines[kernel_start].compare(0, head.size(), head) != 0) kernel_start++;
        if (kernel_start == lines.size()) kernel_start = 0;
        for (size_t i = kernel_start; i < lines.size(); i++) {
            const std::string &l = lines[i];
            size_t p = l.find("for (int32_t ");
            if (p != std::string::npos) {
                size_t b = p + 13, e = l.find_first_of(" =", b);
                loops[l.substr(b, e - b)].push_back((int)i + 1);
            }
            p = l.find("// produce ");
            if (p != std::string::npos && l.find_first_not_of(' ') == p)
                produces[l.substr(p + 11)].push_back((int)i + 1);
        }
    }
    // The next unclaimed line of this C++ name (or of its '_'-suffixed form), or 0.
    int claim(std::map<std::string, std::vector<int>> &m, const std::string &key) {
        for (const std::string &k : {key, key + "_"}) {
            auto it = m.find(k);
            if (it != m.end() && !it->second.empty()) {
                int l = it->second.front();
                it->second.erase(it->second.begin());
                return l;
            }
        }
        return 0;
    }
};

// The statement as nested blocks (div.blk > div.hd + div.bd) and lines
// (div.ln). Six or more lets and checks in a row fold into one closed block.
class NestHTML : public IRVisitor {
public:
    std::set<std::string> badged;  // loops whose folded badges were shown

    NestHTML(const Palette &p, const FoldedLoops &f, CppIndex &c) : pal(p), folded(f), cpp(c) {}

    std::string html(const Stmt &s) {
        include(s);
        flush();
        return out;
    }

protected:
    void visit(const LetStmt *op) override {
        ExprText v = render(op->value, pal);
        run.push_back(
            {line_html("let", "<span class=\"kw\">let</span> " + name_html(op->name, pal, "nm") + " = " + v.html,
                       "let " + op->name + " = " + v.text),
             false});
        include(op->body);
    }
    void visit(const AssertStmt *op) override {
        std::string msg;
        for (const Expr &m : op->message) {
            const auto *s = m.as<StringImm>();
            msg += s ? s->value : "{" + to_string(m) + "}";
        }
        ExprText c = render(op->condition, pal);
        run.push_back(
            {line_html("assert", "<span class=\"kw\">assert</span> " + c.html, "assert " + c.text, msg), true});
    }
    void visit(const ProducerConsumer *op) override {
        int l = op->is_producer ? cpp.claim(cpp.produces, op->name) : 0;
        const char *word = op->is_producer ? "produce" : "consume";
        open_block(op->is_producer ? "prod" : "cons", pal.cls(op->name),
                   "<span class=\"kw\">" + std::string(word) + "</span> " + name_html(op->name, pal, "nm"), l);
        include(op->body);
        close_block();
    }
    void visit(const For *op) override {
        std::string h;
        switch (op->for_type) {
        case ForType::Parallel: h = "<span class=\"kind k-par\">parallel</span>"; break;
        case ForType::Vectorized: h = "<span class=\"kind k-vec\">vectorized</span>"; break;
        case ForType::Unrolled: h = "<span class=\"kind k-unr\">unrolled</span>"; break;
        default: break;
        }
        h += "<span class=\"kw\">for</span> (" + name_html(op->name, pal, "lv") + ", " + short_expr(op->min, pal) +
             ", " + short_expr(op->extent, pal) + ")";
        if (folded.vectorized.count(op->name))
            h += "<span class=\"kind k-vec\" title=\"the scalar loop run where the vector body's guard fails\">"
                 "scalar fallback</span>";
        auto it = folded.badges.find(op->name);
        if (it != folded.badges.end() && badged.insert(op->name).second) {
            for (const std::string &b : it->second) h += b;
        }
        std::string f = pal.owner(op->name);
        open_block("loop", f.empty() ? "" : pal.cls(f), h, cpp.claim(cpp.loops, c_mangle(op->name)), op->name);
        include(op->body);
        close_block();
    }
    void visit(const Store *op) override {
        ExprText i = render(op->index, pal), v = render(op->value, pal);
        std::string c = pal.cls(op->name), lanes;
        if (op->value.type().lanes() > 1)
            lanes = "<span class=\"kind k-vec\">&times;" + std::to_string(op->value.type().lanes()) + "</span>";
        line("st " + c,
             lanes + "<span class=\"ld " + c + "\"><b>" + escape(op->name) + "</b>[" + i.html + "]</span> = " + v.html,
             op->name + "[" + i.text + "] = " + v.text);
    }
    void visit(const Provide *op) override {  // only before flattening
        auto render_list = [&](const std::vector<Expr> &es) {
            ExprText r;
            for (const Expr &e : es) {
                ExprText t = render(e, pal);
                r.html += (r.html.empty() ? "" : ", ") + t.html;
                r.text += (r.text.empty() ? "" : ", ") + t.text;
            }
            return r;
        };
        ExprText a = render_list(op->args), v = render_list(op->values);
        if (op->values.size() > 1) v = {"{" + v.html + "}", "{" + v.text + "}"};
        std::string c = pal.cls(op->name);
        line("st " + c, "<span class=\"ld " + c + "\"><b>" + escape(op->name) + "</b>(" + a.html + ")</span> = " + v.html,
             op->name + "(" + a.text + ") = " + v.text);
    }
    void visit(const Allocate *op) override {
        std::string size = short_expr(op->size, pal);
        if (const auto *n = op->size.as<IntImm>())
            size += " <small>(" + human_bytes(n->value * op->type.bytes()) + ")</small>";
        open_block("alloc", pal.cls(op->name),
                   "<span class=\"kw\">allocate</span> " + name_html(op->name, pal, "nm") + "[" +
                       escape(op->type.to_string()) + " &times; " + size + "]");
        include(op->body);
        close_block();
    }
    void visit(const Realize *op) override {  // only before flattening
        std::string box;
        for (const Range &r : op->bounds)
            box += (box.empty() ? "[" : ", [") + short_expr(r.min, pal) + ", " + short_expr(r.extent, pal) + "]";
        open_block("alloc", pal.cls(op->name),
                   "<span class=\"kw\">realize</span> " + name_html(op->name, pal, "nm") + "(" + box + ")");
        include(op->body);
        close_block();
    }
    void visit(const IfThenElse *op) override {
        open_block("cond", "", "<span class=\"kw\">if</span> (" + short_expr(op->condition, pal, 90) + ")");
        include(op->then_case);
        close_block();
        if (op->else_case.defined()) {
            open_block("cond", "", "<span class=\"kw\">else</span>");
            include(op->else_case);
            close_block();
        }
    }
    void visit(const Evaluate *op) override {
        ExprText v = render(op->value, pal);
        line("ev", v.html, v.text);
    }

private:
    const Palette &pal;
    const FoldedLoops &folded;
    CppIndex &cpp;
    std::string out;
    int next_id = 0;
    std::vector<std::pair<std::string, bool>> run;  // pending let (false) and assert (true) lines

    // A line past 160 characters shows two lines (click to open) and
    // carries its full text as a tooltip.
    static std::string line_html(const std::string &cls, const std::string &html, const std::string &text,
                                 const std::string &title = "") {
        bool long_line = text.size() > 160;
        std::string tip = title.empty() ? (long_line ? text : "") : title;
        return "<div class=\"ln " + cls + (long_line ? " long" : "") + "\"" +
               (tip.empty() ? "" : " title=\"" + escape(tip) + "\"") + ">" + html + "</div>";
    }
    void line(const std::string &cls, const std::string &html, const std::string &text) {
        flush();
        out += line_html(cls, html, text);
    }
    void flush() {
        if (run.size() < 6) {
            for (const auto &l : run) out += l.first;
        } else {
            size_t checks = std::count_if(run.begin(), run.end(), [](const auto &l) { return l.second; });
            std::string what = std::to_string(run.size() - checks) + " lets";
            if (checks) what += " &middot; " + std::to_string(checks) + " checks";
            out += "<div class=\"blk grp closed\" id=\"n" + std::to_string(next_id++) +
                   "\"><div class=\"hd\"><span class=\"tog\"></span><span class=\"hx\">" + what + "</span></div>" +
                   "<div class=\"bd\">";
            for (const auto &l : run) out += l.first;
            out += "</div></div>";
        }
        run.clear();
    }
    void open_block(const std::string &kind, const std::string &cls, const std::string &header, int cpp_line = 0,
                    const std::string &loop = "") {
        flush();
        std::string id = "n" + std::to_string(next_id++);
        out += "<div class=\"blk " + kind + (cls.empty() ? "" : " " + cls) + "\" id=\"" + id + "\"><div class=\"hd\"";
        if (!loop.empty()) out += " data-loop=\"" + escape(loop) + "\"";
        if (cpp_line) {
            out += " data-cpp=\"" + std::to_string(cpp_line) + "\"";
            cpp.block_of_line[cpp_line] = id;
        }
        out += "><span class=\"tog\"></span><span class=\"hx\">" + header + "</span>";
        if (cpp_line) out += "<span class=\"go\" title=\"show in the C++\">C++ " + std::to_string(cpp_line) + "</span>";
        out += "</div><div class=\"bd\">";
    }
    void close_block() {
        flush();
        out += "</div></div>";
    }
};

// Two bars, the schedule's (in the Func's colour) and the unfused baseline's
// (grey), scaled to the larger of the two.
std::string bar_pair(int64_t sched, int64_t unfused, const std::string &cls, bool bytes) {
    int64_t top = std::max<int64_t>(std::max(sched, unfused), 1);
    auto one = [&](const char *label, int64_t v, const std::string &c) {
        char w[16];
        std::snprintf(w, sizeof(w), "%.1f%%", 100.0 * (double)v / (double)top);
        return "<div class=\"m\"><span class=\"lab\">" + std::string(label) + "</span><div class=\"bar\"><i class=\"" +
               c + "\" style=\"width:" + w + "\"></i></div><span class=\"num\" title=\"" + grouped(v) +
               (bytes ? " bytes" : "") + "\">" + (bytes ? human_bytes(v) : grouped(v)) + "</span></div>";
    };
    return one("schedule", sched, cls) + one("unfused", unfused, "un");
}

std::string report_html(const PipelineReport &r, const Palette &pal) {
    std::string h =
        "<table class=\"rep\"><thead><tr><th>Func</th><th>computed / stored at</th><th>allocation</th>"
        "<th>points computed</th><th>memory traffic</th></tr></thead><tbody>";
    for (const FuncReport &f : r.funcs) {
        std::string c = pal.cls(f.name), alloc;
        for (size_t i = 0; i < f.allocation.size(); i++)
            alloc += (i ? "&times;" : "") + std::to_string(f.allocation[i]);
        h += "<tr class=\"fr " + c + "\" data-f=\"" + escape(f.name) + "\">";
        std::string what = f.is_output ? "output"
                           : f.boundary_condition.empty() ? ""
                                                          : "made by BoundaryConditions::" + f.boundary_condition;
        h += "<td><span class=\"chip " + c + "\">" + escape(f.name) + "</span>" +
             (what.empty() ? "" : "<div class=\"sub\">" + escape(what) + "</div>") + "</td>";
        h +=
            "<td><div>" + escape(f.compute_level) + "</div><div class=\"sub\">" + escape(f.store_level) + "</div></td>";
        if (f.is_output) {
            h += "<td><div class=\"sub\">the output buffer</div></td>";
        } else if (f.inlined) {
            h += "<td><div class=\"sub\">none: inlined at every use</div></td>";
        } else {
            h += "<td><div>" + alloc + " <span class=\"sub\">" + human_bytes(f.allocation_bytes) + "</span></div>" +
                 "<div class=\"sub\">" + grouped(f.realizations) + " realization" + (f.realizations == 1 ? "" : "s") +
                 " &middot; <span class=\"tag " + (f.in_memory ? "mem" : "cache") + "\">" +
                 (f.in_memory ? "in memory" : "in cache") + "</span></div></td>";
        }
        char rc[96];
        std::snprintf(rc, sizeof(rc), f.inlined ? "inlined: %.2f&times; the points of compute_root" : "%.2f&times; recompute",
                      f.recompute);
        h += "<td>" + bar_pair(f.points_computed, f.points_computed_unfused, c, false) + "<div class=\"sub\">" + rc +
             " &middot; " + grouped(f.reads) + " reads</div></td>";
        if (f.is_output) h += "<td><div class=\"sub\">written once: counted with the outputs</div></td>";
        else if (f.memory_bytes == 0 && f.memory_bytes_unfused == 0)
            h += "<td><div class=\"sub\">none: stays in cache, fused or not</div></td>";
        else h += "<td>" + bar_pair(f.memory_bytes, f.memory_bytes_unfused, c, true) + "</td>";
        h += "</tr>";
    }
    h += "</tbody><tfoot><tr><td colspan=\"3\"><b>All memory traffic</b><div class=\"sub\">inputs read " +
         human_bytes(r.input_bytes) + ", outputs written " + human_bytes(r.output_bytes) + "</div></td><td>" +
         "<div class=\"saved\">saved <b>" + human_bytes(r.bytes_saved()) + "</b></div></td><td>" +
         bar_pair(r.memory_bytes, r.memory_bytes_unfused, "tot", true) + "</td></tr></tfoot></table>";
    std::string sizes;
    for (const auto &kv : r.sizes) {
        sizes += (sizes.empty() ? "" : ", ") + escape(kv.first) + " ";
        for (size_t i = 0; i < kv.second.size(); i++) sizes += (i ? "&times;" : "") + std::to_string(kv.second[i]);
    }
    h += "<p class=\"note\">Counted for " + sizes + ". Allocations over " + human_bytes(r.cache_bytes) +
         " are counted as memory traffic (written once and read back once per point); smaller ones stay in cache. "
         "Unfused: every computed Func moved to compute_root." +
         (r.exact ? "" : " <b>Approximate:</b> some loop bounds depend on values known only when running.") +
         (r.sampled ? " <b>Estimated:</b> counting reached its budget of loop visits; the loops left were counted "
                      "from their first iteration."
                    : "") +
         "</p>";
    return h;
}

const char *const cpp_keywords[] = {"alignas", "auto",     "break",   "const",     "continue", "else",   "extern",
                                    "for",     "if",       "inline",  "namespace", "return",   "sizeof", "static",
                                    "struct",  "template", "typedef", "typename",  "using",    "void",   "while"};

// One line of C++ with keywords, types, comments and buffer names marked.
std::string cpp_line_html(const std::string &l, const std::map<std::string, std::string> &buffers) {
    static const std::set<std::string> kws(std::begin(cpp_keywords), std::end(cpp_keywords));
    size_t first = l.find_first_not_of(' ');
    if (first != std::string::npos && l[first] == '#') return "<span class=\"pp\">" + escape(l) + "</span>";
    std::string r;
    for (size_t i = 0; i < l.size();) {
        char c = l[i];
        if (c == '/' && i + 1 < l.size() && l[i + 1] == '/') {
            r += "<span class=\"cm\">" + escape(l.substr(i)) + "</span>";
            break;
        }
        if (c == '"') {
            size_t j = i + 1;
            while (j < l.size() && l[j] != '"') j += l[j] == '\\' ? 2 : 1;
            j = std::min(j + 1, l.size());
            r += "<span class=\"str\">" + escape(l.substr(i, j - i)) + "</span>";
            i = j;
            continue;
        }
        if (std::isalpha((unsigned char)c) || c == '_') {
            size_t j = i;
            while (j < l.size() && (std::isalnum((unsigned char)l[j]) || l[j] == '_')) j++;
            std::string w = l.substr(i, j - i);
            auto b = buffers.find(w);
            if (kws.count(w)) r += "<span class=\"kw\">" + w + "</span>";
            else if (b != buffers.end()) r += "<span class=\"bf " + b->second + "\">" + w + "</span>";
            else if (w.size() > 2 && w.compare(w.size() - 2, 2, "_t") == 0) r += "<span class=\"ty\">" + w + "</span>";
            else r += w;
            i = j;
            continue;
        }
        r += escape(std::string(1, c));
        i++;
    }
    return r;
}

std::string cpp_html(const CppIndex &cpp, const Palette &pal, const std::vector<std::string> &buffer_names) {
    std::map<std::string, std::string> buffers;
    for (const std::string &b : buffer_names) buffers[c_mangle(b)] = pal.cls(b);
    std::string h;
    if (cpp.kernel_start > 0)
        h += "<div class=\"skip\">lines 1&ndash;" + std::to_string(cpp.kernel_start) +
             ": the runtime prologue and vector types, as in every emitted file</div>";
    for (size_t i = cpp.kernel_start; i < cpp.lines.size(); i++) {
        int n = (int)i + 1;
        auto b = cpp.block_of_line.find(n);
        h += "<div class=\"cl" + std::string(cpp.lines[i].size() > 160 ? " long" : "") +
             (b == cpp.block_of_line.end() ? "" : " lk") + "\" id=\"cpp-" + std::to_string(n) + "\"";
        if (b != cpp.block_of_line.end()) h += " data-n=\"" + b->second + "\"";
        h += "><span class=\"no\">" + std::to_string(n) + "</span><span class=\"code\">" +
             cpp_line_html(cpp.lines[i], buffers) + "</span></div>";
    }
    return h;
}

// The autoscheduler's explanation (Explain.cpp's text): its first block
// (target, machine, search) as a header, then one folded block per
// decision, its summary the decision's first line ("blur_x: compute_at(...)",
// the Func in its colour) and the predicted cost, its body the alternatives
// with the chosen one ("  * ...") marked.
std::string autoschedule_html(const std::string &text, const Palette &pal) {
    std::vector<std::vector<std::string>> blocks(1);
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (line.empty()) {
            if (!blocks.back().empty()) blocks.emplace_back();
            continue;
        }
        blocks.back().push_back(line);
    }
    if (blocks.back().empty()) blocks.pop_back();
    std::string h;
    for (size_t b = 0; b < blocks.size(); b++) {
        const std::vector<std::string> &lines = blocks[b];
        std::string first = lines[0], func, rest = first;
        size_t colon = first.find(": ");
        if (colon != std::string::npos && first[0] != ' ' && !pal.cls(first.substr(0, colon)).empty())
            func = first.substr(0, colon), rest = first.substr(colon);
        if (b == 0 || lines.size() == 1) {
            h += "<div class=\"why-head\">";
            for (const std::string &l : lines) h += "<div>" + escape(l) + "</div>";
            h += "</div>";
            continue;
        }
        h += "<details class=\"why\"><summary>";
        h += func.empty() ? escape(first) : "<span class=\"chip " + pal.cls(func) + "\">" + escape(func) + "</span>" +
                                                escape(rest);
        size_t body = 1;
        if (lines.size() > 1 && lines[1].find("predicted") != std::string::npos)
            h += "<span class=\"hint\">" + escape(lines[1]) + "</span>", body = 2;
        h += "</summary>";
        for (size_t i = body; i < lines.size(); i++) {
            bool chosen = lines[i].rfind("  * ", 0) == 0;
            h += std::string("<div class=\"ln") + (chosen ? " chosen" : "") + "\">" + escape(lines[i]) + "</div>";
        }
        h += "</details>";
    }
    return h;
}

}  // namespace

std::string stmt_html(const StmtHTMLInputs &in) {
    Palette pal;
    for (const FuncReport &f : in.report.funcs) pal.add(f.name, false);
    std::vector<std::string> buffers;
    for (const LoweredArgument &a : in.func.args) {
        if (!a.is_buffer) continue;
        pal.add(a.name, !a.is_output);
        buffers.push_back(a.name);
    }
    for (const FuncReport &f : in.report.funcs) buffers.push_back(f.name);

    FoldedLoops folded(pal);
    if (in.loop_nest.defined()) folded.include(in.loop_nest);
    CppIndex cpp(in.cpp, in.func.name);
    NestHTML nest(pal, folded, cpp);
    std::string nest_html = nest.html(in.func.body);
    std::string stray;  // folded loops whose enclosing loop is not in the final nest
    for (const auto &kv : folded.badges) {
        if (nest.badged.count(kv.first)) continue;
        for (const std::string &b : kv.second) stray += b;
    }

    std::string sizes;
    for (const auto &kv : in.report.sizes) {
        sizes += (sizes.empty() ? "" : ", ") + escape(kv.first) + " ";
        for (size_t i = 0; i < kv.second.size(); i++) sizes += (i ? "&times;" : "") + std::to_string(kv.second[i]);
    }
    std::string title = escape(in.func.name);
    std::string h = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + title +
                    " &mdash; Kiln loop nest</title><style>\n" + kiln_embedded_stmt_html_css + pal.css() +
                    "</style></head><body>";
    h += "<header><h1>" + title + "</h1><span class=\"meta\">" + escape(in.target) + " &middot; " + sizes +
         "</span><div class=\"legend\">" + pal.legend() +
         "</div><div class=\"tools\">"
         "<label><input type=\"checkbox\" id=\"lets\" checked> lets &amp; checks</label>"
         "<button id=\"expand\">Expand all</button><button id=\"collapse\">Collapse all</button></div></header>";
    h += "<main><section class=\"panel\" id=\"nest\"><h2>Loop nest <span class=\"hint\">click a loop for its C++ "
         "&middot; &#9662; folds</span></h2><div class=\"body\">";
    if (!stray.empty()) h += "<div class=\"ln\">outside any loop: " + stray + "</div>";
    h += nest_html + "</div></section><div class=\"col\">";
    if (!in.explanation.empty())
        h += "<section class=\"panel\" id=\"autoschedule\"><h2>Autoschedule <span class=\"hint\">why each "
             "stanza: the choice, its predicted time and the alternatives (&#9656; unfolds)</span></h2>"
             "<div class=\"body\">" +
             autoschedule_html(in.explanation, pal) + "</div></section>";
    h += "<section class=\"panel\" id=\"report\"><h2>Fusion report <span class=\"hint\">this schedule against every "
         "Func compute_root</span></h2><div class=\"body\">" +
         report_html(in.report, pal) + "</div></section>";
    h += "<section class=\"panel\" id=\"cpp\"><h2>Emitted C++ <span class=\"hint\">click a blue line number for its "
         "loop</span></h2><div class=\"body\">" +
         cpp_html(cpp, pal, buffers) + "</div></section></div></main><script>\n" +
         kiln_embedded_stmt_html_js + "</script></body></html>\n";
    return h;
}

}  // namespace internal

namespace {

std::vector<std::shared_ptr<internal::FunctionContents>> output_contents(const Pipeline &p) {
    std::vector<std::shared_ptr<internal::FunctionContents>> r;
    for (const Func &f : p.outputs()) r.push_back(f.contents());
    return r;
}

}  // namespace

std::string stmt_html(const Pipeline &p, const std::string &fn_name, const std::vector<Argument> &args,
                      const std::map<std::string, std::vector<int>> &sizes, const Target &t,
                      const std::string &explanation) {
    internal::StmtHTMLInputs in;
    in.explanation = explanation;
    // First: it checks the name and the signature, and the report its sizes.
    in.cpp = p.compile_to_cpp_source(fn_name, args, t);
    in.report = p.report(sizes, t);
    auto outs = output_contents(p);
    internal::LowerOptions nest;
    nest.stop = internal::LowerStop::LoopNest;
    // For the NPU target the final statement is the loop nest its own passes start from.
    in.func = internal::lower(outs, fn_name, internal::lowered_args(args, outs.size()), t,
                              t.has(Target::NPU) ? nest : internal::LowerOptions());
    in.loop_nest = internal::lower(outs, fn_name, {}, t, nest).body;
    in.target = t.to_string();
    return internal::stmt_html(in);
}

std::string stmt_html(const Pipeline &p, const std::string &fn_name,
                      const std::map<std::string, std::vector<int>> &sizes, const Target &t) {
    return stmt_html(p, fn_name, p.infer_arguments(), sizes, t);
}

}  // namespace kiln
