// host.go owns the seam between the shared SDK logic and the host: the
// property kinds as the ABI numbers them, and the host calls, reached
// through package variables so that tests can replace them. The platform
// files (host_wasip1.go, host_native.go) supply the platform* functions.

package sim

// assertKind is the `kind` argument of the host's `assert` call.
type assertKind uint32

const (
	kindAlways              assertKind = 0
	kindAlwaysOrUnreachable assertKind = 1
	kindSometimes           assertKind = 2
	kindReachable           assertKind = 3
	kindUnreachable         assertKind = 4

	// kindMask selects the kind; bits 8-15 carry a numeric form's
	// comparison, so the host can read "left" and "right" from the details
	// and guide left - right (docs/abi.md).
	kindMask         assertKind = 0xff
	opGreater        assertKind = 1 << 8
	opGreaterOrEqual assertKind = 2 << 8
	opLess           assertKind = 3 << 8
	opLessOrEqual    assertKind = 4 << 8
)

// The host calls. details is already JSON (or empty); location is "file:line"
// (or empty).
var (
	hostAssert        func(kind assertKind, cond bool, message, details, location string) = platformAssert
	hostSetupComplete func(details string)                                                = platformSetupComplete
	hostRandomU64     func() uint64                                                       = platformRandomU64
	hostBuggify       func(site string) bool                                              = platformBuggify
	hostGuide         func(maximize bool, value float64, name string)                     = platformGuide
)
