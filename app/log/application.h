#pragma once

namespace payops {

// All three binaries share one identity so that they share one app-data location
// (~/.local/share/payops on Linux): the CLI's sandbox is the console's sandbox.
void setApplicationIdentity();

} // namespace payops
