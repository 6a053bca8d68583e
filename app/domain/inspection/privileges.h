#pragma once

#include <QSqlDatabase>

namespace payops {

// What the connected account may do, so that the console can hide or disable what it may
// not. The database refuses it anyway; this only spares the operator a refusal.
struct Privileges
{
    bool flipSwitch = false;
    bool drain = false;
    bool compensate = false;
    bool decideRequests = false; // approve another operator's compensation request
    bool draftPayments = false;  // draft a 漏单 of a statement as a missing payment
    bool decidePayments = false; // confirm or discard another account's draft
};

// Asks the server itself: each probe is EXPLAIN of a statement the action runs (the drain's
// are the very texts it executes), which the server checks for privileges and then changes
// nothing. Parsing SHOW GRANTS would miss roles, column grants and wildcards. Throws db::Error
// for anything but a refusal.
Privileges probePrivileges(const QSqlDatabase &db);

} // namespace payops
