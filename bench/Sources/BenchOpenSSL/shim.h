#include <openssl/err.h>
#include <openssl/evp.h>
