// Compiled against payops_callback: the callback room including the money room below it must
// build (tests/CMakeLists.txt, layers_allow_an_include_between_rooms).
#include "domain/money/auditlog.h"
