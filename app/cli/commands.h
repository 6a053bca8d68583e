#pragma once

#include "command.h"

#include <memory>
#include <vector>

namespace payops::cli {

std::unique_ptr<Command> makeSandboxCommand();
std::unique_ptr<Command> makeMigrateCommand();
std::unique_ptr<Command> makeDegradeCommand();
std::unique_ptr<Command> makeDrainCommand();
std::unique_ptr<Command> makeInspectCommand();
std::unique_ptr<Command> makeCompensateCommand();
std::unique_ptr<Command> makeAuditCommand();
std::unique_ptr<Command> makeStormCommand();
std::unique_ptr<Command> makePostureCommand();
std::unique_ptr<Command> makeReconcileCommand();
std::unique_ptr<Command> makeReportCommand();
std::unique_ptr<Command> makeGrantCommand();
std::unique_ptr<Command> makeAccountsCommand();
std::unique_ptr<Command> makeMappingCommand();

// Every command `payops` knows, in the order `payops --help` lists them.
std::vector<std::unique_ptr<Command>> allCommands();

} // namespace payops::cli
