package table

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Tag options, read only by tag creation and expiry (maint). They are read
// as compactd always read them: spaces trimmed, names lower-cased, booleans
// as Go's strconv.ParseBool. A malformed value does not fail ParseOptions:
// it is kept in its Opt's Err, and maint reports it where it needs the
// value (a table that creates no tags never does).
const (
	OptTagAutomaticCreation      = "tag.automatic-creation"
	OptTagCreationPeriod         = "tag.creation-period"
	OptTagCreationPeriodDuration = "tag.creation-period-duration"
	OptTagPeriodFormatter        = "tag.period-formatter"
	OptTagCreationDelay          = "tag.creation-delay"
	OptTagNumRetainedMax         = "tag.num-retained-max"
	OptTagDefaultTimeRetained    = "tag.default-time-retained"
	OptTagAutomaticCompletion    = "tag.automatic-completion"
	OptTagTimeExpireEnabled      = "tag.time-expire-enabled"
	OptSinkProcessTimeZone       = "sink.process-time-zone"
	OptSinkWatermarkTimeZone     = "sink.watermark-time-zone"
	OptMetastorePartitionedTable = "metastore.partitioned-table"
)

// Opt is one option's typed value: Set when the key is present, Err when
// its value is malformed (Value is then the default).
type Opt[T any] struct {
	Value T
	Set   bool
	Err   error
}

// TagOptions are a table's tag.* options (and the time zones automatic
// tagging reads).
type TagOptions struct {
	// AutomaticCreation is tag.automatic-creation, trimmed and lower-cased
	// ("" when unset); maint checks it names a mode.
	AutomaticCreation string
	// CreationPeriod is tag.creation-period and PeriodFormatter
	// tag.period-formatter (default with_dashes), trimmed and lower-cased.
	CreationPeriod, PeriodFormatter string
	// CreationPeriodDuration is tag.creation-period-duration (> 0).
	CreationPeriodDuration Opt[time.Duration]
	// CreationDelay is tag.creation-delay.
	CreationDelay Opt[time.Duration]
	// NumRetainedMax is tag.num-retained-max (>= 0).
	NumRetainedMax Opt[int]
	// DefaultTimeRetained is tag.default-time-retained.
	DefaultTimeRetained Opt[time.Duration]
	// AutomaticCompletion is tag.automatic-completion.
	AutomaticCompletion Opt[bool]
	// TimeExpireEnabled is tag.time-expire-enabled (default true).
	TimeExpireEnabled Opt[bool]
	// ProcessTimeZone and WatermarkTimeZone are sink.process-time-zone and
	// sink.watermark-time-zone, trimmed.
	ProcessTimeZone, WatermarkTimeZone Opt[string]
}

// ParseTagOptions reads the tag options of raw (a table's Options.Raw).
func ParseTagOptions(raw map[string]string) TagOptions {
	var o TagOptions
	lower := func(key string) string { return strings.ToLower(strings.TrimSpace(raw[key])) }
	dur := func(key string) Opt[time.Duration] {
		v, ok := raw[key]
		if !ok {
			return Opt[time.Duration]{}
		}
		d, err := ParseDuration(v)
		if err != nil {
			return Opt[time.Duration]{Set: true, Err: fmt.Errorf("option %s=%q: %w", key, v, err)}
		}
		return Opt[time.Duration]{Value: d, Set: true}
	}
	boolean := func(key string, def bool) Opt[bool] {
		v, ok := raw[key]
		if !ok {
			return Opt[bool]{Value: def}
		}
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return Opt[bool]{Value: def, Set: true, Err: fmt.Errorf("option %s=%q: %w", key, v, err)}
		}
		return Opt[bool]{Value: b, Set: true}
	}
	str := func(key string) Opt[string] {
		v, ok := raw[key]
		return Opt[string]{Value: strings.TrimSpace(v), Set: ok}
	}
	o.AutomaticCreation = lower(OptTagAutomaticCreation)
	o.CreationPeriod = lower(OptTagCreationPeriod)
	o.PeriodFormatter = lower(OptTagPeriodFormatter)
	if o.PeriodFormatter == "" {
		o.PeriodFormatter = "with_dashes"
	}
	o.CreationPeriodDuration = dur(OptTagCreationPeriodDuration)
	if d := &o.CreationPeriodDuration; d.Set && (d.Err != nil || d.Value <= 0) {
		*d = Opt[time.Duration]{Set: true, Err: fmt.Errorf("option %s=%q: not a positive duration", OptTagCreationPeriodDuration, raw[OptTagCreationPeriodDuration])}
	}
	o.CreationDelay = dur(OptTagCreationDelay)
	if v, ok := raw[OptTagNumRetainedMax]; ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		o.NumRetainedMax = Opt[int]{Value: n, Set: true}
		if err != nil || n < 0 {
			o.NumRetainedMax = Opt[int]{Set: true, Err: fmt.Errorf("option %s=%q: not a non-negative integer", OptTagNumRetainedMax, v)}
		}
	}
	o.DefaultTimeRetained = dur(OptTagDefaultTimeRetained)
	o.AutomaticCompletion = boolean(OptTagAutomaticCompletion, false)
	o.TimeExpireEnabled = boolean(OptTagTimeExpireEnabled, true)
	o.ProcessTimeZone = str(OptSinkProcessTimeZone)
	o.WatermarkTimeZone = str(OptSinkWatermarkTimeZone)
	return o
}

// MetastorePartitioned is metastore.partitioned-table (trimmed, any case),
// read only by partition expiry.
func MetastorePartitioned(raw map[string]string) bool {
	return strings.EqualFold(strings.TrimSpace(raw[OptMetastorePartitionedTable]), "true")
}
