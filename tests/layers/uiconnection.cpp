// Compiled against payops_ui alone: a widget reaching for the database worker, which the
// console core keeps to itself. The build must fail (tests/CMakeLists.txt,
// layers_refuse_a_connection_in_the_ui).
#include "db/dbworker.h"
