/* The standard PKCS#11 2.40/3.0 header of Debian's libp11-kit-dev (its pkg-config
   p11-kit-1 include directory is /usr/include/p11-kit-1); it needs only <stddef.h>.
   Modules are loaded with dlopen at run time, so no library is linked. */
#include <dlfcn.h>
#include <p11-kit-1/p11-kit/pkcs11.h>
