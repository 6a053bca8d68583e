// Compiled against payops_domain: the same kind of include, one layer down, must build.
#include "db/connection.h"
