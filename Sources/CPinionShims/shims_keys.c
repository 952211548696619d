#include "pinion_shims_keys.h"

long pinion_BIO_get_mem_data(BIO *bio, char **data) { return BIO_get_mem_data(bio, data); }
