// stmt_html: the page holds every loop of the lowered nest linked to its
// C++ `for` line, one colour class per Func on its produce block, stores and
// loads, the report's numbers, and well-formed, escaped markup; on the tiled
// 3x3 blur, a histogram with update definitions, and a hand-made statement.
#include <catch2/catch.hpp>
#include <regex>
#include <sstream>

#include "driver/StmtHTML.h"
#include "kiln/StmtHTML.h"
#include "kiln/kiln.h"

using namespace kiln;

namespace {

// "" if every tag the page opens is closed in order, attribute quotes pair
// up and no '<' of the text is left unescaped; else what is wrong.
std::string markup_problem(const std::string &h) {
    static const std::vector<std::string> void_tags = {"meta", "input", "br", "hr", "img", "link"};
    std::vector<std::string> open;
    for (size_t i = h.find('<'); i != std::string::npos; i = h.find('<', i + 1)) {
        if (h.compare(i, 2, "<!") == 0) continue;  // doctype
        char c = i + 1 < h.size() ? h[i + 1] : ' ';
        if (!std::isalpha((unsigned char)c) && c != '/') return "unescaped '<' at: " + h.substr(i, 40);
        size_t end = h.find('>', i);
        if (end == std::string::npos) return "unterminated tag at: " + h.substr(i, 40);
        std::string tag = h.substr(i + 1, end - i - 1);
        if (std::count(tag.begin(), tag.end(), '"') % 2) return "unpaired quote in <" + tag + ">";
        bool closing = tag[0] == '/';
        std::string name;
        for (size_t k = closing; k < tag.size() && std::isalnum((unsigned char)tag[k]); k++) name += tag[k];
        if (closing) {
            if (open.empty() || open.back() != name)
                return "</" + name + "> closes <" + (open.empty() ? "" : open.back()) + ">";
            open.pop_back();
        } else if (std::find(void_tags.begin(), void_tags.end(), name) == void_tags.end()) {
            open.push_back(name);
            if (name == "style" || name == "script") end = h.find("</" + name + ">", end) - 1;  // raw text
        }
        i = end;
    }
    return open.empty() ? "" : "<" + open.back() + "> is never closed";
}

std::vector<std::string> loop_names(const std::string &stmt) {
    std::vector<std::string> r;
    std::regex re(R"(for \(([^,]+),)");
    for (std::sregex_iterator it(stmt.begin(), stmt.end(), re), e; it != e; ++it) r.push_back((*it)[1]);
    return r;
}

std::vector<std::string> lines_of(const std::string &text) {
    std::vector<std::string> r;
    std::istringstream ss(text);
    for (std::string l; std::getline(ss, l);) r.push_back(l);
    return r;
}

// Each loop's header carries data-cpp="N", and line N of the C++ is its `for`.
void check_loops_linked(const std::string &html, const std::string &stmt, const std::string &cpp) {
    std::vector<std::string> cpp_lines = lines_of(cpp);
    std::vector<std::string> loops = loop_names(stmt);
    REQUIRE_FALSE(loops.empty());
    for (const std::string &loop : loops) {
        INFO("loop " << loop);
        std::smatch m;
        REQUIRE(std::regex_search(html, m,
                                  std::regex("data-loop=\"" + std::regex_replace(loop, std::regex(R"(\.)"), R"(\.)") +
                                             "\" data-cpp=\"([0-9]+)\"")));
        int n = std::stoi(m[1]);
        REQUIRE(n <= (int)cpp_lines.size());
        std::string mangled = std::regex_replace(loop, std::regex(R"([^A-Za-z0-9_])"), "_");
        CHECK(cpp_lines[n - 1].find("for (int32_t " + mangled + " = ") != std::string::npos);
        CHECK(html.find("id=\"cpp-" + std::to_string(n) + "\" data-n=\"n") != std::string::npos);
    }
}

// The colour class of a Func (from the legend), checked on its produce
// block, its stores and its loads, and defined in the style sheet.
std::string colour_of(const std::string &html, const std::string &func, bool loaded = true) {
    std::smatch m;
    REQUIRE(std::regex_search(html, m, std::regex("class=\"chip (c[0-9]+)\" data-f=\"" + func + "\"")));
    std::string c = m[1];
    CHECK(html.find("." + c + "{--fc:#") != std::string::npos);
    CHECK(html.find("class=\"blk prod " + c + "\"") != std::string::npos);
    CHECK(html.find("<span class=\"nm " + c + "\">" + func + "</span>") != std::string::npos);
    CHECK(html.find("class=\"ln st " + c) != std::string::npos);
    if (loaded) CHECK(html.find("<span class=\"ld " + c + "\"><b>" + func + "</b>[") != std::string::npos);
    CHECK(html.find("<tr class=\"fr " + c + "\" data-f=\"" + func + "\">") != std::string::npos);
    return c;
}

}  // namespace

TEST_CASE("stmt_html: the tiled 3x3 blur", "[html]") {
    ImageParam input(Float(32), 2, "input");
    Var x("x"), y("y"), xi("xi"), yi("yi");
    Func clamped = BoundaryConditions::repeat_edge(input);
    Func blur_x("blur_x"), blur_y("blur_y");
    blur_x(x, y) = (clamped(x - 1, y) + clamped(x, y) + clamped(x + 1, y)) / 3;
    blur_y(x, y) = (blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3;
    blur_y.tile(x, y, xi, yi, 32, 16).vectorize(xi, 8).parallel(y);
    blur_x.compute_at(blur_y, x).vectorize(x, 8);
    Pipeline p(blur_y);
    std::string html = stmt_html(p, "blur", {{"blur_y", {64, 48}}});

    CHECK(markup_problem(html) == "");
    check_loops_linked(html, p.lowered_stmt(), p.compile_to_cpp_source("blur"));
    std::string bx = colour_of(html, "blur_x"), by = colour_of(html, "blur_y", false);
    CHECK(bx != by);
    CHECK(html.find("class=\"blk loop " + bx + "\"") != std::string::npos);  // blur_x's loops
    CHECK(html.find("class=\"blk loop " + by + "\"") != std::string::npos);
    CHECK(html.find("<span class=\"kind k-par\">parallel</span>") != std::string::npos);
    CHECK(html.find("title=\"blur_x.s0.x.x_vec: vectorized loop") != std::string::npos);
    CHECK(html.find("data-cpp=") != std::string::npos);

    // The report's figures (worked out in tests/lower/test_report.cpp).
    CHECK(html.find("32&times;18") != std::string::npos);
    CHECK(html.find("6 realizations") != std::string::npos);
    CHECK(html.find(">3,456</span>") != std::string::npos);  // points computed
    CHECK(html.find(">3,200</span>") != std::string::npos);  // unfused
    CHECK(html.find("1.08&times; recompute") != std::string::npos);
    // The boundary condition's Func is inlined, and marked as Kiln's.
    CHECK(html.find("made by BoundaryConditions::repeat_edge") != std::string::npos);
    CHECK(html.find("none: inlined at every use") != std::string::npos);
    // 3 reads by each of blur_x's 3,456 points over compute_root's 66 x 50.
    CHECK(html.find("inlined: 3.14&times; the points of compute_root") != std::string::npos);
    CHECK(html.find("blur_y 64&times;48") != std::string::npos);

    // Comparisons in the bounds checks are escaped.
    CHECK(html.find("input.min.0 &lt;= ") != std::string::npos);
    CHECK(html.find("&amp;&amp;") != std::string::npos);
}

TEST_CASE("stmt_html: a histogram with update definitions", "[html]") {
    ImageParam in(Int(32), 2, "in");
    Var x("x"), y("y"), i("i");
    Func hist("hist"), cdf("cdf"), out("out");
    RDom r(0, in.width(), 0, in.height(), "r");
    hist(i) = 0;
    hist(clamp(in(r.x, r.y), 0, 255)) += 1;
    RDom k(0, 256, "k");
    cdf(i) = 0;
    cdf(k) = select(k > 0, cdf(k - 1), 0) + hist(k);
    out(x, y) = cdf(clamp(in(x, y), 0, 255));
    hist.compute_root();
    cdf.compute_root();
    out.vectorize(x, 8).parallel(y);
    Pipeline p(out);
    std::string html = stmt_html(p, "equalize", {{"out", {16, 8}}});

    CHECK(markup_problem(html) == "");
    check_loops_linked(html, p.lowered_stmt(), p.compile_to_cpp_source("equalize"));
    std::string h = colour_of(html, "hist"), c = colour_of(html, "cdf");
    colour_of(html, "out", false);
    CHECK(html.find("class=\"blk loop " + h + "\" id=\"n") != std::string::npos);
    CHECK(html.find("data-loop=\"hist.s1.r.x\"") != std::string::npos);
    CHECK(html.find("data-loop=\"cdf.s1.k.x\"") != std::string::npos);
    CHECK(html.find("class=\"chip c3 in\" title=\"input\" data-f=\"in\"") != std::string::npos);
    CHECK(html.find(">384</span>") != std::string::npos);  // 256 zeros + 16 x 8 increments
    CHECK(html.find("allocate</span> <span class=\"nm " + c + "\">cdf</span>[int32 &times; 257") != std::string::npos);
}

TEST_CASE("stmt_html: hand-made statement, escaping and '_'-suffixed C++ names", "[html]") {
    using namespace kiln::internal;
    Expr fx = Variable::make(Int(32), "f.s0.x");
    Stmt store = Store::make("f", Select::make(fx < 3 && fx > 0, Load::make(Int(32), "g", fx), 0), fx);
    Stmt body = For::make("f.s0.x", 0, 8, ForType::Serial, store);
    body = ProducerConsumer::make("f", true, body);
    body = Block::make(AssertStmt::make(fx >= 0, -1, {StringImm::make("x < \"8\" & 'y'")}), body);
    StmtHTMLInputs in;
    in.func.name = "k";
    in.func.body = body;
    for (const char *b : {"g", "f"}) {
        LoweredArgument a;
        a.name = b;
        a.is_buffer = true;
        a.is_output = std::string(b) == "f";
        a.type = Int(32);
        a.dimensions = 1;
        in.func.args.push_back(a);
    }
    FuncReport f;
    f.name = "f";
    f.is_output = true;
    in.report.funcs.push_back(f);
    in.cpp =
        "// prologue\nextern \"C\" int k(halide_buffer_t *g_buffer) {\n    // produce f\n"
        "    for (int32_t f_s0_x_ = 0; f_s0_x_ < 8; ++f_s0_x_) {\n        f[f_s0_x_] = (f_s0_x_ < 3 && 0 < f_s0_x_) ? "
        "g[f_s0_x_] : 0;\n"
        "    }\n}\n";
    std::string html = stmt_html(in);

    CHECK(markup_problem("<div><span></div></span>") != "");  // the checker itself
    CHECK(markup_problem("<div>a < b</div>") != "");
    CHECK(markup_problem("<div title=\"a>b\"></div>") != "");
    CHECK(markup_problem(html) == "");
    CHECK(html.find("data-loop=\"f.s0.x\" data-cpp=\"4\"") != std::string::npos);
    CHECK(html.find("id=\"cpp-4\" data-n=\"n") != std::string::npos);
    CHECK(html.find("id=\"cpp-3\" data-n=\"n") != std::string::npos);  // the produce comment
    CHECK(html.find("lines 1&ndash;1: the runtime prologue") != std::string::npos);
    CHECK(html.find("title=\"x &lt; &quot;8&quot; &amp; &#39;y&#39;\"") != std::string::npos);
    CHECK(html.find("(f.s0.x &lt; 3) &amp;&amp; (f.s0.x &gt; 0)") != std::string::npos);
    CHECK(html.find("<span class=\"ld c1\"><b>g</b>[f.s0.x]</span>") != std::string::npos);  // g: an input, grey
    CHECK(html.find(".c1{--fc:#64748b") != std::string::npos);
}

TEST_CASE("stmt_html: misuse is reported as by compile_to_cpp and report", "[html]") {
    Var x("x");
    Func f("f");
    f(x) = x;
    CHECK_THROWS_WITH(stmt_html(Pipeline(f), "not valid", {{"f", {8}}}),
                      Catch::Contains("not a valid C function name"));
    CHECK_THROWS_WITH(stmt_html(Pipeline(f), "k", {}), Catch::Contains("give the size of output f"));
}

TEST_CASE("stmt_html: the autoscheduler's explanation as a panel", "[html][autoschedule]") {
    ImageParam input(Float(32), 2, "input");
    Var x("x"), y("y");
    Func blur_x("blur_x"), blur_y("blur_y");
    blur_x(x, y) = input(x, y) + input(x + 1, y) + input(x + 2, y);
    blur_y(x, y) = blur_x(x, y) + blur_x(x, y + 1) + blur_x(x, y + 2);
    Pipeline p(blur_y);
    AutoscheduleOptions o;
    o.machine = MachineModel();  // decisions independent of the machine running the test
    AutoscheduleResult r = autoschedule(p, Target("x86-64-linux-avx2-fma"), {{"blur_y", {128, 128}}}, o);
    std::vector<Argument> args = p.infer_arguments();
    std::string html =
        stmt_html(p, "blur", args, {{"blur_y", {128, 128}}}, Target("x86-64-linux-avx2-fma"), r.explanation);
    CHECK(markup_problem(html) == "");
    REQUIRE(html.find("id=\"autoschedule\"") != std::string::npos);
    // The header block (target, machine, search), escaped.
    CHECK(html.find("<div class=\"why-head\"><div>Autoschedule for blur_y") != std::string::npos);
    CHECK(html.find("rates: defaults") != std::string::npos);
    // One folded entry per decision: blur_x's, its name in blur_x's colour,
    // the chosen alternative marked.
    std::smatch m;
    REQUIRE(std::regex_search(html, m, std::regex("class=\"chip (c[0-9]+)\" data-f=\"blur_x\"")));
    std::string bx = m[1];
    const AutoscheduleDecision *d = nullptr;
    for (const auto &dec : r.decisions)
        if (dec.func == "blur_x") d = &dec;
    REQUIRE(d);
    CHECK(html.find("<details class=\"why\"><summary><span class=\"chip " + bx + "\">blur_x</span>: " +
                    html_escape(d->chosen)) != std::string::npos);
    CHECK(html.find("<div class=\"ln chosen\">  * ") != std::string::npos);
    size_t decisions = 0;
    for (size_t at = html.find("<details class=\"why\">"); at != std::string::npos;
         at = html.find("<details class=\"why\">", at + 1))
        decisions++;
    CHECK(decisions >= 2);  // blur_x and blur_y's loops

    // Without an explanation (a hand schedule), no panel.
    CHECK(stmt_html(p, "blur", {{"blur_y", {128, 128}}}).find("id=\"autoschedule\"") == std::string::npos);
}
