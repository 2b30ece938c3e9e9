#include "charts/axis_ticks.hpp"

#include <QValueAxis>
#include <algorithm>
#include <cmath>

namespace pipelens::ui {

double integerStep(double raw) {
    double step = 1.0;
    while (true) {
        for (double m : {1.0, 2.0, 5.0}) {
            if (m * step >= raw) return m * step;
        }
        step *= 10.0;
    }
}

void setIntegerTicks(QValueAxis* axis, double lo, double hi, int maxTicks) {
    const double step = integerStep((hi - lo) / maxTicks);
    const double first = std::floor(lo / step);
    axis->setTickType(QValueAxis::TicksDynamic);
    axis->setTickAnchor(0.0);
    axis->setTickInterval(step);
    axis->setRange(first * step, std::max(std::ceil(hi / step), first + 1) * step);
    axis->setLabelFormat("%.0f");
    axis->setMinorTickCount(0);
}

}  // namespace pipelens::ui
