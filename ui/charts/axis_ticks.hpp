#pragma once
// Ticks for Qt Charts value axes of whole-number quantities (delays, copies, stages, S, percent,
// block updates): ticks at whole multiples of a round step, so every label names the value its
// grid line is at (a fixed tick count over [0, 69] put a line at 34.5 and labelled it "35").
class QValueAxis;

namespace pipelens::ui {

// 1, 2 or 5 times a power of ten, an integer at least 1, and at least `raw`.
double integerStep(double raw);

// Sets `axis` to ticks at multiples of integerStep((hi - lo) / maxTicks), its range widened to
// the ticks around [lo, hi], labels without decimals.
void setIntegerTicks(QValueAxis* axis, double lo, double hi, int maxTicks);

}  // namespace pipelens::ui
