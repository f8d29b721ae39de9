package orc

import (
	"errors"
	"fmt"
	"io"
)

var (
	// ErrCorrupt marks a file that is not valid ORC.
	ErrCorrupt = errors.New("corrupt ORC file")
	// ErrUnsupported marks valid ORC this reader does not handle.
	ErrUnsupported = errors.New("unsupported ORC feature")
)

// Kind is an ORC type kind (Type.Kind of orc_proto).
type Kind int

const (
	Boolean Kind = iota
	Byte
	Short
	Int
	Long
	Float
	Double
	String
	Binary
	Timestamp
	List
	Map
	Struct
	Union
	Decimal
	Date
	Varchar
	Char
	TimestampInstant
)

var kindNames = [...]string{"boolean", "tinyint", "smallint", "int", "bigint", "float", "double", "string",
	"binary", "timestamp", "array", "map", "struct", "uniontype", "decimal", "date", "varchar", "char",
	"timestamp with local time zone"}

func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Type is one node of the file's type tree; column ids are indexes into
// File.Types, 0 being the root struct.
type Type struct {
	Kind       Kind
	Subtypes   []int
	FieldNames []string
	MaxLength  int
	Precision  int
	Scale      int
	Attributes map[string]string
}

// StripeInfo locates a stripe.
type StripeInfo struct {
	Offset, IndexLength, DataLength, FooterLength, NumRows uint64
}

// File is an opened ORC file: its tail is decoded, stripes are read on
// demand.
type File struct {
	r            io.ReaderAt
	size         int64
	Compression  Compression
	BlockSize    uint64
	Version      []uint64
	WriterVer    uint64
	Writer       uint64
	Software     string
	NumRows      uint64
	Types        []Type
	Stripes      []StripeInfo
	RowIndexStep uint64
	Metadata     map[string][]byte
}

// maxTail bounds postscript + footer + metadata: Java writes a few KiB to
// MiBs (statistics of many columns and stripes).
const maxTail = 64 << 20

// Open reads the tail of the ORC file r of size bytes.
func Open(r io.ReaderAt, size int64) (*File, error) {
	if size < 4 {
		return nil, fmt.Errorf("%w: %d bytes", ErrCorrupt, size)
	}
	tailLen := int64(16 << 10)
	if tailLen > size {
		tailLen = size
	}
	tail := make([]byte, tailLen)
	if _, err := r.ReadAt(tail, size-tailLen); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read ORC tail: %w", err)
	}
	psLen := int64(tail[len(tail)-1])
	if psLen+1 > tailLen {
		return nil, fmt.Errorf("%w: postscript length %d", ErrCorrupt, psLen)
	}
	ps := tail[tailLen-1-psLen : tailLen-1]
	f := &File{r: r, size: size}
	var footerLen, metaLen uint64
	var magic string
	err := pbWalk(ps, func(fl pbField) error {
		var err error
		switch fl.num {
		case 1:
			footerLen = fl.v
		case 2:
			f.Compression = Compression(fl.v)
		case 3:
			f.BlockSize = fl.v
		case 4:
			f.Version, err = pbUints(f.Version, fl)
		case 5:
			metaLen = fl.v
		case 6:
			f.WriterVer = fl.v
		case 8000:
			magic = string(fl.b)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postscript: %w", err)
	}
	if magic != "ORC" {
		return nil, fmt.Errorf("%w: no ORC magic in the postscript", ErrCorrupt)
	}
	switch f.Compression {
	case CompressionNone, CompressionZlib, CompressionSnappy, CompressionLZ4, CompressionZstd:
	default:
		return nil, fmt.Errorf("%w: compression %s", ErrUnsupported, f.Compression)
	}
	if footerLen > maxTail || metaLen > maxTail || int64(footerLen+metaLen)+psLen+1 > size {
		return nil, fmt.Errorf("%w: footer length %d, metadata length %d in a file of %d bytes", ErrCorrupt, footerLen, metaLen, size)
	}
	footerStart := size - 1 - psLen - int64(footerLen)
	raw := make([]byte, footerLen)
	if _, err := r.ReadAt(raw, footerStart); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read ORC footer: %w", err)
	}
	footer, err := decompress(f.Compression, f.BlockSize, raw, maxTail)
	if err != nil {
		return nil, fmt.Errorf("footer: %w", err)
	}
	if err := f.parseFooter(footer); err != nil {
		return nil, fmt.Errorf("footer: %w", err)
	}
	if err := f.checkTypes(); err != nil {
		return nil, fmt.Errorf("footer: %w", err)
	}
	for i, s := range f.Stripes {
		end := s.Offset + s.IndexLength + s.DataLength + s.FooterLength
		if end < s.Offset || end > uint64(footerStart) {
			return nil, fmt.Errorf("%w: stripe %d ends at %d, past the footer at %d", ErrCorrupt, i, end, footerStart)
		}
	}
	return f, nil
}

func (f *File) parseFooter(b []byte) error {
	return pbWalk(b, func(fl pbField) error {
		switch fl.num {
		case 3:
			var s StripeInfo
			err := pbWalk(fl.b, func(x pbField) error {
				switch x.num {
				case 1:
					s.Offset = x.v
				case 2:
					s.IndexLength = x.v
				case 3:
					s.DataLength = x.v
				case 4:
					s.FooterLength = x.v
				case 5:
					s.NumRows = x.v
				case 6, 7:
					return fmt.Errorf("%w: encrypted stripe", ErrUnsupported)
				}
				return nil
			})
			if err != nil {
				return err
			}
			f.Stripes = append(f.Stripes, s)
		case 4:
			t, err := parseType(fl.b)
			if err != nil {
				return err
			}
			f.Types = append(f.Types, t)
		case 5:
			var k string
			var v []byte
			if err := pbWalk(fl.b, func(x pbField) error {
				switch x.num {
				case 1:
					k = string(x.b)
				case 2:
					v = x.b
				}
				return nil
			}); err != nil {
				return err
			}
			if f.Metadata == nil {
				f.Metadata = map[string][]byte{}
			}
			f.Metadata[k] = append([]byte(nil), v...)
		case 6:
			f.NumRows = fl.v
		case 8:
			f.RowIndexStep = fl.v
		case 9:
			f.Writer = fl.v
		case 10:
			return fmt.Errorf("%w: encrypted columns", ErrUnsupported)
		case 12:
			f.Software = string(fl.b)
		}
		return nil
	})
}

func parseType(b []byte) (Type, error) {
	t := Type{}
	var subs []uint64
	err := pbWalk(b, func(x pbField) error {
		var err error
		switch x.num {
		case 1:
			t.Kind = Kind(x.v)
		case 2:
			subs, err = pbUints(subs, x)
		case 3:
			t.FieldNames = append(t.FieldNames, string(x.b))
		case 4:
			t.MaxLength = int(x.v)
		case 5:
			t.Precision = int(x.v)
		case 6:
			t.Scale = int(x.v)
		case 7:
			var k, v string
			if err := pbWalk(x.b, func(y pbField) error {
				switch y.num {
				case 1:
					k = string(y.b)
				case 2:
					v = string(y.b)
				}
				return nil
			}); err != nil {
				return err
			}
			if t.Attributes == nil {
				t.Attributes = map[string]string{}
			}
			t.Attributes[k] = v
		}
		return err
	})
	for _, s := range subs {
		if s > 1<<31 {
			return t, fmt.Errorf("%w: subtype %d", ErrCorrupt, s)
		}
		t.Subtypes = append(t.Subtypes, int(s))
	}
	return t, err
}

// checkTypes makes the type list a tree: every subtype id points forward
// (Java writes types in pre-order), so decoding cannot loop.
func (f *File) checkTypes() error {
	if len(f.Types) == 0 || f.Types[0].Kind != Struct {
		return fmt.Errorf("%w: the root type is not a struct", ErrCorrupt)
	}
	parent := make([]bool, len(f.Types))
	for i, t := range f.Types {
		for _, s := range t.Subtypes {
			if s > 0 && s < len(parent) {
				if parent[s] {
					return fmt.Errorf("%w: column %d is the subtype of two columns", ErrCorrupt, s)
				}
				parent[s] = true
			}
		}
		if t.Kind < Boolean || t.Kind > TimestampInstant {
			return fmt.Errorf("%w: column %d has type kind %d", ErrCorrupt, i, int(t.Kind))
		}
		for _, s := range t.Subtypes {
			if s <= i || s >= len(f.Types) {
				return fmt.Errorf("%w: column %d has subtype %d", ErrCorrupt, i, s)
			}
		}
		want := -1
		switch t.Kind {
		case List:
			want = 1
		case Map:
			want = 2
		case Struct:
			if len(t.FieldNames) != len(t.Subtypes) {
				return fmt.Errorf("%w: struct column %d has %d names for %d fields", ErrCorrupt, i, len(t.FieldNames), len(t.Subtypes))
			}
		case Union:
		default:
			want = 0
		}
		if want >= 0 && len(t.Subtypes) != want {
			return fmt.Errorf("%w: %s column %d has %d subtypes", ErrCorrupt, t.Kind, i, len(t.Subtypes))
		}
	}
	return nil
}
