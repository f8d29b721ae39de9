package fileio

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"

	"github.com/compactd/compactd/internal/backoff"
)

// Retry policy for the S3 store.
//
// Retries are done by the SDK's standard retryer rather than by
// go-retryablehttp under the SDK: the SDK retries above the signer, so every
// attempt is re-signed and its seekable body rewound; it classifies S3 error
// codes (SlowDown, RequestTimeout, InternalError) and also errors S3 reports
// inside a 200 response (CompleteMultipartUpload), which an HTTP-level client
// cannot see; and it treats every failure to send or to receive a response as
// a connection error worth retrying. Backoff is exponential with full jitter,
// capped at maxBackoff.
//
// The SDK's client-side retry quota (a token bucket that makes retries fail
// fast after many errors) is switched off: a maintenance daemon would rather
// slow down than abandon a compaction half-way, and attempts are bounded by
// MaxAttempts anyway.
//
// Two places cannot rely on the SDK alone and retry themselves:
//   - a body that breaks while being read (GetObject) fails after the SDK has
//     returned, so range reads resume from the last byte received;
//   - WriteExclusive must not retry blindly: a conditional PUT whose response
//     was lost may have succeeded, and its retry would then see 412 and report
//     a commit that happened as a conflict. It retries itself and verifies
//     (see S3.WriteExclusive).

const (
	defaultMaxAttempts = 8
	baseBackoff        = 100 * time.Millisecond
	maxBackoff         = 10 * time.Second
)

func newRetryer(maxAttempts int) aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = maxAttempts
		o.MaxBackoff = maxBackoff
		o.RateLimiter = ratelimit.None
	})
}

// ownRetry is the backoff of the retries fileio does itself (see above):
// full jitter over a window doubling from baseBackoff up to maxBackoff, so
// that racing clients spread out instead of retrying in lockstep.
var ownRetry = backoff.Policy{Base: baseBackoff, Max: maxBackoff, Below: 1}

// retryDelay returns the delay before retry number attempt (0-based): 1 ms
// plus ownRetry's delay, so never 0 and at most maxBackoff + 1 ms.
func retryDelay(attempt int) time.Duration {
	return ownRetry.Delay(attempt) + time.Millisecond
}

// sleepCtx waits for d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// httpStatus returns the HTTP status of a failed S3 call, or 0 when no
// response was received (connection refused, reset, timeout).
func httpStatus(err error) int {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// errorCode returns the S3 error code ("NoSuchKey", "SlowDown"), if any.
func errorCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// isTransient reports whether a failed call may succeed when repeated: no
// response at all, a server error, throttling, or a request timeout. Client
// errors (4xx) are definitive.
func isTransient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	switch errorCode(err) {
	case "SlowDown", "RequestTimeout", "InternalError", "ServiceUnavailable", "Throttling", "RequestTimeTooSkewed":
		return true
	}
	st := httpStatus(err)
	return st == 0 || st >= 500 || st == 429
}
