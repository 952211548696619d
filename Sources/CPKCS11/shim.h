/* The standard PKCS#11 2.40/3.0 header from Debian's libp11-kit-dev (pkg-config p11-kit-1);
   modules are loaded with dlopen at run time, so nothing is linked. */
#include <dlfcn.h>
#include <p11-kit/pkcs11.h>
