// The light helpers (scripted fetcher, SplitMix) come with PinionTestSupport, so a test target
// that already uses the heavy helpers needs one import.

@_exported import PinionTrustTestSupport
