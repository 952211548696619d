// Umbrella header: C wrappers for OpenSSL macros and system calls Swift cannot import (prefixed pinion_).
#ifndef CPINIONSHIMS_H
#define CPINIONSHIMS_H
#include "pinion_shims_keys.h"
#include "pinion_shims_x509.h"
#include "pinion_shims_https.h"
#include "pinion_shims_server.h"
#include "pinion_shims_files.h"
#endif
