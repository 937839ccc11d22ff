// doc.go owns the package documentation.

// Package sim is the Go guest SDK of seedfall, a deterministic simulation
// testing tool. A guest is an ordinary Go program built with
// GOOS=wasip1 GOARCH=wasm; this package binds the host's `seedfall` import
// module (see docs/abi.md) and gives the program:
//
//   - properties, with Antithesis-style semantics: [Always],
//     [AlwaysOrUnreachable], [Sometimes], [Reachable], [Unreachable], and the
//     numeric forms such as [AlwaysGreaterThan] that also record both operands
//     and guide their difference toward the bound;
//   - numeric guidance, [Maximize] and [Minimize]: values seedfall explore
//     climbs (never a failure);
//   - [SetupComplete], to tell the host that the workload finished setting up;
//   - randomness from the run's `random` stream: [Random], [RandomIntN],
//     [RandomFloat64], [RandomChoice], [RandomBool];
//   - [Buggify], FoundationDB-style fault injection sites.
//
// Built for any other target (for example in `go test`), the package still
// works: properties are no-ops except that a failing Always,
// AlwaysOrUnreachable or a reached Unreachable prints
// "seedfall: property failed: <message>" to stderr, randomness comes from
// math/rand/v2, Buggify never fires, and Maximize and Minimize do nothing.
//
// Pass every property message as a string literal: seedfall finds the
// program's properties by scanning its Go sources for calls such as
// sim.Always(cond, "message", nil), and can fail a sweep for a property that
// never ran only if it found it there.
package sim
