package sdk

import (
	"errors"

	loop "github.com/the-loop-dev/the-loop"
	loophttp "github.com/the-loop-dev/the-loop/http"
)

// The kinds of failure, for errors.Is.
var (
	// ErrNotFound: no such standing session (HTTP 404).
	ErrNotFound = errors.New("the-loop: not found")
	// ErrInvalid: a caller's mistake — an invalid or already used name, an
	// unknown verb, an empty message (HTTP 400) — or a request that fails
	// validation (HTTP 422, also ErrUnprocessable).
	ErrInvalid = errors.New("the-loop: invalid request")
	// ErrUnprocessable: a request that fails validation (HTTP 422).
	ErrUnprocessable = errors.New("the-loop: unprocessable request")
	// ErrInternal: anything else went wrong, in the service or on the way.
	ErrInternal = errors.New("the-loop: internal error")
	// ErrNotRunning: nothing answers at the service's address.
	ErrNotRunning = errors.New("the-loop: service not running")
)

// CodeNotRunning is Error.Code when nothing answers at the address.
const CodeNotRunning = "not_running"

// Error is every failure an SDK call returns.
type Error struct {
	// Code is the-loop's error code (loop.ENOTFOUND, loop.EINVALID,
	// loop.EUNPROCESSABLE, loop.EINTERNAL), or CodeNotRunning.
	Code string
	// Message is what the service (or the client) says went wrong, written
	// for the operator.
	Message string
	// Err is the cause: the client's *loop.Error, or the
	// *http.NotRunningError of the-loop's http package.
	Err error
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is matches the kind sentinels: ErrNotFound, ErrInvalid (400 and 422),
// ErrUnprocessable, ErrInternal and ErrNotRunning.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.Code == loop.ENOTFOUND
	case ErrInvalid:
		return e.Code == loop.EINVALID || e.Code == loop.EUNPROCESSABLE
	case ErrUnprocessable:
		return e.Code == loop.EUNPROCESSABLE
	case ErrInternal:
		return e.Code == loop.EINTERNAL
	case ErrNotRunning:
		return e.Code == CodeNotRunning
	}
	return false
}

// wrap turns the client's error into an *Error (nil stays nil).
func wrap(err error) error {
	if err == nil {
		return nil
	}
	var nr *loophttp.NotRunningError
	if errors.As(err, &nr) {
		return &Error{Code: CodeNotRunning, Message: nr.Error(), Err: err}
	}
	return &Error{Code: loop.ErrorCode(err), Message: loop.ErrorMessage(err), Err: err}
}
