#pragma once

#include <QString>
#include <QtGlobal>

namespace payops::console {

// What a person reads on screen, in the language's conventions (QLocale() — the default
// locale, which the binaries set to the chosen language). Machine formats (JSON, the CLI's
// --json, SQL text) never come through here.

// 123456 -> "1,234.56" in English and Chinese, "1.234,56" in German. Exact: integer
// arithmetic, never a floating-point yuan.
QString formatYuan(qint64 fen);
// formatYuan with the currency sign: "¥1,234.56", "-¥12.34".
QString formatMoney(qint64 fen);
// A UTC moment to the millisecond: the locale's date order with a four-digit year and a
// 24-hour clock, "2026/12/2 09:00:00.123" in Chinese, "12/2/2026 09:00:00.123" in American
// English; ISO order ("2026-12-02 09:00:00.123") where no language is set (the C locale of
// servers, cron and the tests). Incidents are read to the millisecond, so never the locale's
// 12-hour clock or its short year. Empty for 0.
QString displayTime(qint64 micros);

} // namespace payops::console
