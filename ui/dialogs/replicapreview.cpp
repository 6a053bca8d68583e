#include "replicapreview.h"

#include "palette.h"

namespace payops {

QString ReplicaPreview::planNote(const Size &replica, const Size &primary)
{
    if (replica == primary)
        return tr("Planned again on the primary: the same as the replica showed.");
    return palette::strong(palette::Role::Warning,
                           tr("The replica is behind: it showed %1 order(s) and %2 row(s) to "
                              "change, the primary has %3 order(s) and %4 row(s) now. The "
                              "figures above are the primary's, and they are what runs.")
                               .arg(QString::number(replica.orders), QString::number(replica.rows),
                                    QString::number(primary.orders),
                                    QString::number(primary.rows)));
}

QString ReplicaPreview::failedOnReplica(const db::Error &error)
{
    return tr("Not planned on the replica (%1): the figures above are the primary's alone, and "
              "they are what runs.")
        .arg(db::userMessage(error).toHtmlEscaped());
}

QString ReplicaPreview::failedOnPrimary(const db::Error &error)
{
    return tr("The preview failed on the primary, where the compensation runs: %1")
        .arg(db::userMessage(error).toHtmlEscaped());
}

} // namespace payops
