#pragma once

#include "lab/localserver.h"

#include <QTemporaryDir>

namespace payops::bench {

// What every benchmark starts with: the application's identity, logging kept to errors, and a
// private MariaDB server in a temporary folder, stopped and removed when the benchmark ends.
// Construct it after the QCoreApplication.
class PrivateServer final
{
public:
    PrivateServer();
    LocalServer &server() { return m_server; }
    QString folder() const { return m_folder.path(); }

private:
    QTemporaryDir m_folder;
    LocalServer m_server;
};

} // namespace payops::bench
