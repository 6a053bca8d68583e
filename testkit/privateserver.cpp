#include "privateserver.h"

#include "log/application.h"
#include "log/logging.h"

namespace payops::bench {

PrivateServer::PrivateServer()
    : m_folder(QStringLiteral("/tmp/payops-bench-XXXXXX"))
    , m_server(m_folder.path())
{
    setApplicationIdentity();
    setupLogging(QStringLiteral("bench"), 4 /* error */);
    m_server.start();
}

} // namespace payops::bench
