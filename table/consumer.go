package table

import (
	"fmt"
	"time"
)

// Consumer is a consumer/consumer-<id> file: the next snapshot a streaming
// reader will read. Expiration must keep snapshots >= NextSnapshot.
type Consumer struct {
	ID           string // from the file name
	NextSnapshot int64
	// ModTime is the consumer file's modification time, set by
	// ReadConsumers from the listing (consumer.expiration-time counts from
	// it); zero otherwise. It is not part of the JSON.
	ModTime time.Time
}

// ParseConsumer parses {"nextSnapshot": n}. A missing key reads as 0, as
// Java's primitive creator parameter does; unknown keys are ignored.
func ParseConsumer(id string, data []byte) (*Consumer, error) {
	c, _, err := parseConsumer(id, data)
	return c, err
}

// parseConsumer is ParseConsumer that also reports whether nextSnapshot
// was present (and not null): the fail-closed ReadConsumers refuses a file
// without it rather than read it as 0.
func parseConsumer(id string, data []byte) (*Consumer, bool, error) {
	root, err := parseOrdered(data)
	if err != nil {
		return nil, false, fmt.Errorf("consumer %s: parse JSON: %w", id, err)
	}
	if root.kind != jObject {
		return nil, false, fmt.Errorf("consumer %s: expected a JSON object, got %s", id, root.kindName())
	}
	c := &Consumer{ID: id}
	v, present := root.get("nextSnapshot")
	present = present && v.kind != jNull
	if present {
		if c.NextSnapshot, err = v.asInt64("nextSnapshot"); err != nil {
			return nil, false, fmt.Errorf("consumer %s: %w", id, err)
		}
	}
	return c, present, nil
}

// MarshalJSON writes the consumer as Java does.
func (c Consumer) MarshalJSON() ([]byte, error) {
	n := jnode{kind: jObject}
	n.add("nextSnapshot", jInt(c.NextSnapshot))
	return renderJackson(n), nil
}
