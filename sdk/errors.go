package sdk

import (
	"errors"
	"net/http"

	loop "github.com/the-loop-dev/the-loop"
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
	// ErrConflict: the request names a state already moved past — an
	// approval decided, expired or withdrawn, or another session's (HTTP
	// 409).
	ErrConflict = errors.New("the-loop: conflict")
	// ErrUnauthorized: the service wants a bearer token and the request had
	// none, or another one (HTTP 401; see WithToken).
	ErrUnauthorized = errors.New("the-loop: unauthorized")
	// ErrForbidden: the service does not answer to the Host the request
	// named (HTTP 403; see service.allowedHosts), or the token is an agent's
	// own credential, which REST refuses.
	ErrForbidden = errors.New("the-loop: forbidden")
	// ErrInternal: anything else went wrong, in the service or on the way.
	ErrInternal = errors.New("the-loop: internal error")
	// ErrNotRunning: nothing answers at the service's address.
	ErrNotRunning = errors.New("the-loop: service not running")
)

// Codes beyond the-loop's own vocabulary, for failures of the way to the
// service rather than of the request.
const (
	// CodeNotRunning is Error.Code when nothing answers at the address.
	CodeNotRunning = "not_running"
	// CodeUnauthorized is Error.Code of an HTTP 401 (a missing or wrong
	// bearer token).
	CodeUnauthorized = "unauthorized"
	// CodeForbidden is Error.Code of an HTTP 403 (a Host the service does
	// not answer to).
	CodeForbidden = "forbidden"
)

// Error is every failure an SDK call returns.
type Error struct {
	// Code is the-loop's error code (loop.ENOTFOUND, loop.EINVALID,
	// loop.EUNPROCESSABLE, loop.ECONFLICT, loop.EINTERNAL), or CodeNotRunning,
	// CodeUnauthorized or CodeForbidden.
	Code string
	// Message is what the service (or the client) says went wrong, written
	// for the operator.
	Message string
	// Err is the cause: the *loop.Error the HTTP status maps back to (its
	// own cause the *StatusError), or a *NotRunningError. loop.ErrorCode and
	// loop.ErrorMessage read the *loop.Error through it.
	Err error
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is matches the kind sentinels: ErrNotFound, ErrInvalid (400 and 422),
// ErrUnprocessable, ErrConflict (409), ErrUnauthorized (401), ErrForbidden (403), ErrInternal
// and ErrNotRunning.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.Code == loop.ENOTFOUND
	case ErrInvalid:
		return e.Code == loop.EINVALID || e.Code == loop.EUNPROCESSABLE
	case ErrUnprocessable:
		return e.Code == loop.EUNPROCESSABLE
	case ErrUnauthorized:
		return e.Code == CodeUnauthorized
	case ErrForbidden:
		return e.Code == CodeForbidden
	case ErrConflict:
		return e.Code == loop.ECONFLICT
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
	var already *Error
	if errors.As(err, &already) {
		return err
	}
	var nr *NotRunningError
	if errors.As(err, &nr) {
		return &Error{Code: CodeNotRunning, Message: nr.Error(), Err: err}
	}
	switch HTTPStatus(err) {
	case http.StatusUnauthorized:
		return &Error{Code: CodeUnauthorized, Message: loop.ErrorMessage(err), Err: err}
	case http.StatusForbidden:
		return &Error{Code: CodeForbidden, Message: loop.ErrorMessage(err), Err: err}
	}
	return &Error{Code: loop.ErrorCode(err), Message: loop.ErrorMessage(err), Err: err}
}
