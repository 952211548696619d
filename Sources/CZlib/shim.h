// zlib (Debian zlib1g-dev), used only by the PinionSystem module: gzip content coding of the
// transparency log's tiles and entry bundles (docs/DESIGN.md §12).
#include <zlib.h>
