#include "cli/cli.h"
#include "log/application.h"

#include <QCoreApplication>

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    payops::setApplicationIdentity();
    return payops::cli::run(app.arguments().mid(1));
}
