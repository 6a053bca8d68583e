#pragma once

#include "callbackanswer.h"
#include "callbackrequest.h"

#include <QList>
#include <QSqlDatabase>
#include <QString>
#include <QStringList>

#include <functional>
#include <optional>

namespace payops {

struct SwitchObserver;

// What one record-only batch did (docs/decisions/0054-group-commit.md).
struct RecordBatchResult
{
    // The switch as the batch's transaction read it. NORMAL: nothing was written, and every
    // callback takes the handler's path.
    bool recordOnly = false;
    // One per request, in the requests' order: its answer, or nullopt where the request takes
    // the handler's one-at-a-time path once this batch is over (a SUCCESS superseding a stored
    // notice; every request of a batch that met a pay_no another writer stored meanwhile).
    QList<std::optional<CallbackAnswer>> answers;
    int inserted = 0; // rows written
    qint64 txBegin = 0;
    qint64 committed = 0; // 0: nothing committed
};

// RECORD_ONLY's group commit: in one transaction, reads the switch with its barrier lock,
// looks every pay_no up in one statement, answers replays and conflicts as answerForResend
// does (a pay_no twice in the batch: the second copy is answered from the first), and records
// the rest as RECORDED in one multi-row INSERT. `alsoCommit`, when set, gives statements for
// the same transaction once the answers are known (the batch's traces: one commit, and one
// flush of the log, a batch). Three round trips: the begin; the switch and the lookup; the
// writes and the commit. Throws db::Error; then nothing of the batch stays.
using AlsoCommit = std::function<QStringList(const RecordBatchResult &)>;
RecordBatchResult recordBatch(const QSqlDatabase &db, const QList<CallbackRequest> &requests,
                              const QString &instance, SwitchObserver &switchObserver,
                              const AlsoCommit &alsoCommit = {});

} // namespace payops
