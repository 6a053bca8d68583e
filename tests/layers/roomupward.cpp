// Compiled against payops_money alone: the money room reaching up into the callback room,
// which links it. The build must fail (tests/CMakeLists.txt,
// layers_refuse_an_include_between_rooms).
#include "domain/callback/callbackswitch.h"
