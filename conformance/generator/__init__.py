# The conformance fixture generator, split by what it writes (run it through conformance/generate).
