// Compiled against payops_db alone: a database-layer file reaching up into the domain layer.
// The build must fail (tests/CMakeLists.txt, layers_refuse_an_upward_include).
#include "domain/money/compensation.h"
