package table

import (
	"fmt"
)

// Consumer is a consumer/consumer-<id> file: the next snapshot a streaming
// reader will read. Expiration must keep snapshots >= NextSnapshot.
type Consumer struct {
	ID           string // from the file name
	NextSnapshot int64
}

// ParseConsumer parses {"nextSnapshot": n}. A missing key reads as 0, as
// Java's primitive creator parameter does; unknown keys are ignored.
func ParseConsumer(id string, data []byte) (*Consumer, error) {
	root, err := parseOrdered(data)
	if err != nil {
		return nil, fmt.Errorf("consumer %s: parse JSON: %w", id, err)
	}
	if root.kind != jObject {
		return nil, fmt.Errorf("consumer %s: expected a JSON object, got %s", id, root.kindName())
	}
	c := &Consumer{ID: id}
	if v, ok := root.get("nextSnapshot"); ok && v.kind != jNull {
		if c.NextSnapshot, err = v.asInt64("nextSnapshot"); err != nil {
			return nil, fmt.Errorf("consumer %s: %w", id, err)
		}
	}
	return c, nil
}

// MarshalJSON writes the consumer as Java does.
func (c Consumer) MarshalJSON() ([]byte, error) {
	n := jnode{kind: jObject}
	n.add("nextSnapshot", jInt(c.NextSnapshot))
	return renderJackson(n), nil
}
