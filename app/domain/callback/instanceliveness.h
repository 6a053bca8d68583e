#pragma once

#include <QString>

namespace payops {

// How old a payops-callbackd's heartbeat (written every 0.5 s into callback_instance.last_seen_at)
// may be while the instance still counts as live, is one setting: payops_meta
// 'instance_alive_seconds', 5 s by default (ten missed beats). Every program reads the same row,
// so the switch waits for exactly the instances the console shows alive, the posture counts the
// same ones, and a name is refused to a second process while its holder is live
// (docs/decisions/0052-one-liveness-rule.md). This is the threshold while the setting is missing
// or not a whole number of seconds from 1 to 3600.
inline constexpr int kInstanceAliveSeconds = 5;

// The threshold in seconds as an SQL expression: the setting, or kInstanceAliveSeconds.
QString instanceAliveSecondsSql();

// The SQL condition, true for a live row of callback_instance: not stopped, and a heartbeat
// within the threshold by the server's clock (the one that wrote it, so a skewed client clock
// cannot fake it). `alias` qualifies the columns ("i" for "i.stopped_at"); empty for none.
// Every reader that asks whether an instance is live uses this.
QString instanceLiveSql(const QString &alias = QString());

} // namespace payops
