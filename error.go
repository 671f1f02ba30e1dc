package loop

import (
	"errors"
	"fmt"
	"net/http"
)

// Error codes: one vocabulary, mapped once to HTTP statuses and CLI exit codes
// (decisions D7). "already exists" is EINVALID, not a conflict.
const (
	ENOTFOUND      = "not_found"     // HTTP 404, exit 1
	EINVALID       = "invalid"       // HTTP 400, exit 2 (a caller's mistake)
	EUNPROCESSABLE = "unprocessable" // HTTP 422, exit 2 (a body that fails validation)
	EINTERNAL      = "internal"      // HTTP 500, exit 1
	// ECONFLICT is a request the state it names has moved past: an
	// approval decided, expired or withdrawn already, or one that is
	// another session's (decisions D35).
	ECONFLICT = "conflict" // HTTP 409, exit 1
	// ENOTOWNER is a session another host of the fleet owns, or whose
	// ownership moved past the token an action held (decisions D36).
	ENOTOWNER = "not_owner" // HTTP 409, exit 1
	// EUNREACHABLE is a host of the fleet that does not answer: its lease
	// expired, or its address refuses.
	EUNREACHABLE = "unreachable" // HTTP 503, exit 3
	// EUNAVAILABLE is the fleet's store not answering, or this host unable
	// to prove its lease for an action's bound: the action is refused, not
	// guessed.
	EUNAVAILABLE = "unavailable" // HTTP 503, exit 3
)

// Error is the-loop's application error: a code from the vocabulary above,
// a message written for the operator (naming the key, the value and the
// remedy), and an optional wrapped cause.
type Error struct {
	Code    string
	Message string
	Err     error
}

// Error returns the operator-facing message.
func (e *Error) Error() string {
	if e.Message == "" && e.Err != nil {
		return e.Err.Error()
	}
	return e.Message
}

// Unwrap returns the wrapped cause.
func (e *Error) Unwrap() error { return e.Err }

// Errorf builds an *Error with a formatted message. A %w verb wraps its
// argument as the cause.
func Errorf(code, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	return &Error{Code: code, Message: err.Error(), Err: errors.Unwrap(err)}
}

// NotFound, Invalid and Internal are shorthands for Errorf with that code.
func NotFound(format string, args ...any) *Error { return Errorf(ENOTFOUND, format, args...) }

// Invalid is Errorf(EINVALID, …).
func Invalid(format string, args ...any) *Error { return Errorf(EINVALID, format, args...) }

// Internal is Errorf(EINTERNAL, …).
func Internal(format string, args ...any) *Error { return Errorf(EINTERNAL, format, args...) }

// Conflict is Errorf(ECONFLICT, …).
func Conflict(format string, args ...any) *Error { return Errorf(ECONFLICT, format, args...) }

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL
// for any other error, and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the message of the first *Error in err's chain, else
// err.Error().
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Error()
	}
	return err.Error()
}

// HTTPStatus maps an error code to its HTTP status.
func HTTPStatus(code string) int {
	switch code {
	case ENOTFOUND:
		return http.StatusNotFound
	case EINVALID:
		return http.StatusBadRequest
	case EUNPROCESSABLE:
		return http.StatusUnprocessableEntity
	case ECONFLICT, ENOTOWNER:
		return http.StatusConflict
	case EUNREACHABLE, EUNAVAILABLE:
		return http.StatusServiceUnavailable
	case "":
		return http.StatusOK
	default:
		return http.StatusInternalServerError
	}
}

// CodeForHTTPStatus maps an HTTP status back to an error code (the client's
// half of the mapping).
func CodeForHTTPStatus(status int) string {
	switch status {
	case http.StatusNotFound:
		return ENOTFOUND
	case http.StatusBadRequest:
		return EINVALID
	case http.StatusConflict:
		return ECONFLICT
	case http.StatusServiceUnavailable:
		return EUNAVAILABLE
	case http.StatusUnprocessableEntity, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType:
		return EUNPROCESSABLE
	default:
		if status >= 200 && status < 300 {
			return ""
		}
		return EINTERNAL
	}
}

// ExitCode maps an error code to the CLI's exit status.
func ExitCode(code string) int {
	switch code {
	case "":
		return 0
	case EINVALID, EUNPROCESSABLE:
		return 2
	case EUNREACHABLE, EUNAVAILABLE:
		return 3
	default:
		return 1
	}
}
