// errors.go owns the errors simnet makes itself: the unsupported network,
// and the timeout and cancellation of a dial, shaped like the standard
// library's so that callers' checks keep working.

package simnet

import (
	"context"
	"errors"
	"os"
	"strconv"
	"time"
)

// checkNetwork accepts the TCP networks and nothing else. It runs on every
// target, so a program that dials UDP fails natively as it would under
// seedfall.
func checkNetwork(network string) error {
	switch network {
	case "tcp", "tcp4", "tcp6":
		return nil
	}
	return unsupportedNetworkError(network)
}

// unsupportedNetworkError names a network simnet does not handle. It matches
// errors.ErrUnsupported.
type unsupportedNetworkError string

func (e unsupportedNetworkError) Error() string {
	return "network " + strconv.Quote(string(e)) + " is not supported by simnet (only tcp, tcp4 and tcp6)"
}

func (e unsupportedNetworkError) Is(target error) bool {
	return target == errors.ErrUnsupported
}

// errTimeout is a dial that ran out of time. Like the standard library's it
// says "i/o timeout" and reports Timeout; it matches both
// context.DeadlineExceeded and os.ErrDeadlineExceeded, since callers test
// for either.
var errTimeout error = timeoutError{}

type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

func (timeoutError) Is(target error) bool {
	return target == context.DeadlineExceeded || target == os.ErrDeadlineExceeded
}

// errCanceled is a dial whose context was cancelled.
var errCanceled error = canceledError{}

type canceledError struct{}

func (canceledError) Error() string        { return "operation was canceled" }
func (canceledError) Is(target error) bool { return target == context.Canceled }
func (canceledError) Timeout() bool        { return false }
func (canceledError) Temporary() bool      { return false }

// contextError maps a done context's error to the error a dial returns.
func contextError(err error) error {
	switch err {
	case context.DeadlineExceeded:
		return errTimeout
	case context.Canceled:
		return errCanceled
	}
	return err
}

// aLongTimeAgo is a deadline in the past: setting it wakes a goroutine
// waiting on the file at once.
var aLongTimeAgo = time.Unix(1, 0)
