// Compiled against payops_ui alone: what a widget may include, the console core's worker and
// the database layer's value types. The build must pass (layers_allow_the_console_core_in_the_ui).
#include "console/worker.h"
#include "db/dberror.h"
#include "db/dsn.h"
