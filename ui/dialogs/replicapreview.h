#pragma once

#include "console/connectionprofile.h"
#include "console/worker.h"

#include <QCoreApplication>
#include <QLabel>

#include <functional>
#include <memory>
#include <optional>

namespace payops {

// The dry run of a compensation dialog given a read database (decision 0066): read first where
// the pages read (a replica) and shown at once, then planned again on the primary, where the
// run happens and whose plan it carries out. The primary's plan is shown over the replica's,
// and a note says whether the two differ, or why the replica could not plan. Without a read
// database, the primary's alone. Both compensation dialogs, on payops's tables and through a
// mapping, preview this way.
class ReplicaPreview final
{
    Q_DECLARE_TR_FUNCTIONS(payops::ReplicaPreview)

public:
    // What a plan comes to, as far as an operator compares two.
    struct Size
    {
        int orders = 0;
        qint64 rows = 0;
        qint64 moneyFen = 0;
        bool operator==(const Size &) const = default;
    };

    // A worker on the read database for the replica's preview; null without one.
    static std::unique_ptr<console::Worker> readWorker(const console::Target &target)
    {
        return target.readDsn ? std::make_unique<console::Worker>(target.readingDsn()) : nullptr;
    }

    // `read` is null without a read database. `show(preview, onPrimary)` shows a plan; the
    // replica's (onPrimary false) is not yet to be run. `primaryFailed` runs after `status`
    // said that the primary's preview failed.
    template <typename Preview>
    static void run(console::Worker *read, console::Worker &primary, const QString &key,
                    const console::Job<Preview> &job, QObject *receiver, QLabel *status,
                    QLabel *note, std::function<void(const Preview &, bool)> show,
                    std::function<Size(const Preview &)> size, std::function<void()> primaryFailed)
    {
        const auto onPrimary = [=, &primary](const std::optional<Size> &fromReplica) {
            primary.submit<Preview>(
                key, job, receiver,
                [=](const Preview &preview) {
                    show(preview, true);
                    if (!fromReplica)
                        return;
                    note->setText(planNote(*fromReplica, size(preview)));
                    note->show();
                },
                [=](const db::Error &error) {
                    status->setText(failedOnPrimary(error));
                    primaryFailed();
                });
        };
        if (!read) {
            onPrimary(std::nullopt);
            return;
        }
        // A plan under the old settings must not arrive after this one's replica read.
        primary.cancel(key);
        read->submit<Preview>(
            key, job, receiver,
            [=](const Preview &preview) {
                show(preview, false);
                status->setText(tr("Read from the replica; planning again on the primary …"));
                onPrimary(size(preview));
            },
            // An account that may only SELECT there cannot read the four-eyes figures: the
            // primary's plan, the one that runs, is planned alone then.
            [=](const db::Error &error) {
                note->setText(failedOnReplica(error));
                note->show();
                onPrimary(std::nullopt);
            });
    }

private:
    static QString planNote(const Size &replica, const Size &primary);
    static QString failedOnReplica(const db::Error &error);
    static QString failedOnPrimary(const db::Error &error);
};

} // namespace payops
