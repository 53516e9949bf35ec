#pragma once
// Number and text formatting shared by the text renderers. The precision rules
// reproduce the seed report (shared/seeds/report-preemptible-this-cpu.txt), so
// a kbench table can be pasted next to one made by the tools the field uses.
#include <string>
#include <string_view>

#include "report/model.h"

namespace kbench::report {

// |v| >= 1: two decimals ("25.36", "635669.17"); 0 < |v| < 1: two significant
// digits but at least two decimals ("0.0076", "0.061", "0.15"); 0: "0.00".
// Below 1e-6 the fixed form gets unreadable, so scientific ("1.2e-07").
// NaN: "" (an empty cell); infinities: "inf" / "-inf".
std::string format_number(double value);

// Percent with `decimals` decimals and a '%': "-3.89%", "0.00%" (never "-0.00%").
// NaN: "".
std::string format_percent(double percent, int decimals = 2);

// "(I) " / "(R) " / "" for a verdict.
std::string_view mark_prefix(Verdict verdict);
// " (I)" / " (R)" / "" for a verdict, for layouts that put the mark last.
std::string_view mark_suffix(Verdict verdict);

// Every digit needed to read the double back unchanged (shortest round-trip
// form, at most max_digits10 significant digits). NaN: "".
std::string format_exact(double value);

// "1 improvement", "21 improvements".
std::string count_noun(int count, std::string_view singular, std::string_view plural);

// Number of terminal columns `text` takes: UTF-8 code points ("↑" is one).
std::size_t display_width(std::string_view text);

std::string_view verdict_name(Verdict verdict);  // "none", "improvement", "regression"

// RFC 4180: a field that holds a separator, a quote or a line break, quoted
// with its quotes doubled; any other field as it is.
std::string csv_field(const std::string& text);

}  // namespace kbench::report
