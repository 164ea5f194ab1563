#include "lab_chart.h"

#include <kiln/StmtHTML.h>

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace kiln_lab {

namespace {

const char *const kColours[] = {"#8c8c8c", "#2b7bba", "#e07b39", "#3a9e5c", "#a05195", "#d4b22c", "#c0392b"};

std::string escape(const std::string &s) { return kiln::html_escape(s); }

std::string number(double v) {
    char s[32];
    std::snprintf(s, sizeof(s), v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : v >= 1 ? "%.2f" : "%.3f", v);
    return s;
}

// Geometry, in pixels.
constexpr int kLabelWidth = 130, kPanelWidth = 300, kGap = 40, kRowHeight = 26, kTop = 64, kMargin = 16;

// One panel: a heading, then a bar per row scaled to the largest value.
void panel(std::ostringstream &svg, int x0, const std::string &heading, const std::string &unit,
           const std::vector<ChartRow> &rows, double ChartRow::*field) {
    double top = 0;
    for (const ChartRow &r : rows) top = std::max(top, r.*field);
    svg << "<text x='" << x0 << "' y='" << kTop - 12 << "' class='h'>" << escape(heading) << "</text>\n";
    const int bar_max = kPanelWidth - 70;  // room for the value after the bar
    for (size_t i = 0; i < rows.size(); i++) {
        const double v = rows[i].*field;
        const int y = kTop + (int)i * kRowHeight;
        const int len = top > 0 ? std::max(1, (int)(bar_max * v / top + 0.5)) : 1;
        svg << "<rect x='" << x0 << "' y='" << y << "' width='" << len << "' height='" << kRowHeight - 8
            << "' fill='" << kColours[i % (sizeof(kColours) / sizeof(kColours[0]))] << "'><title>"
            << escape(rows[i].schedule) << ": " << number(v) << " " << unit << "</title></rect>\n";
        svg << "<text x='" << x0 + len + 6 << "' y='" << y + kRowHeight - 13 << "'>" << number(v) << " " << unit
            << "</text>\n";
    }
}

}  // namespace

std::string chart_svg(const std::string &title, const std::vector<ChartRow> &rows) {
    const int width = kMargin + kLabelWidth + 2 * kPanelWidth + kGap + kMargin;
    const int height = kTop + (int)rows.size() * kRowHeight + kMargin;
    std::ostringstream svg;
    svg << "<svg xmlns='http://www.w3.org/2000/svg' width='" << width << "' height='" << height
        << "' viewBox='0 0 " << width << " " << height << "' font-family='sans-serif' font-size='12'>\n"
        << "<style>.h{font-weight:bold}.t{font-size:14px;font-weight:bold}</style>\n"
        << "<rect width='100%' height='100%' fill='white'/>\n"
        << "<text x='" << kMargin << "' y='24' class='t'>" << escape(title) << "</text>\n";
    for (size_t i = 0; i < rows.size(); i++) {
        svg << "<text x='" << kMargin + kLabelWidth - 8 << "' y='" << kTop + (int)i * kRowHeight + kRowHeight - 13
            << "' text-anchor='end'>" << escape(rows[i].schedule) << "</text>\n";
    }
    const int x_time = kMargin + kLabelWidth;
    panel(svg, x_time, "time (best run)", "ms", rows, &ChartRow::time_ms);
    panel(svg, x_time + kPanelWidth + kGap, "memory traffic (fusion report)", "MB", rows, &ChartRow::memory_mb);
    svg << "</svg>\n";
    return svg.str();
}

}  // namespace kiln_lab
