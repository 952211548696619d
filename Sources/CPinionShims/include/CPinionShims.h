// Umbrella header: C wrappers for OpenSSL macros Swift cannot import (prefixed pinion_).
#ifndef CPINIONSHIMS_H
#define CPINIONSHIMS_H
#include "pinion_shims_keys.h"
#include "pinion_shims_x509.h"
#include "pinion_shims_https.h"
#include "pinion_shims_server.h"
#endif
