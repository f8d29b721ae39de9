package main

import (
	"encoding/json"
	"io"
	"reflect"
)

// writeJSON prints v as one JSON document in compactd's JSON contract
// (docs/json.md): lowerCamelCase keys, which the structs' tags give, and
// empty lists as [] rather than null. indent pretty-prints.
func writeJSON(w io.Writer, v any, indent bool) error {
	v = emptyLists(reflect.ValueOf(v)).Interface()
	enc := json.NewEncoder(w)
	if indent {
		enc.SetIndent("", "  ")
	}
	return enc.Encode(v)
}

// emptyLists returns v with every nil slice it holds (in struct fields,
// map values, slice elements, behind pointers and interfaces) replaced by
// an empty one. It copies what it changes; v itself is left alone.
func emptyLists(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		inner := emptyLists(v.Elem())
		out := reflect.New(v.Type()).Elem()
		out.Set(inner)
		return out
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		out := reflect.New(v.Type().Elem())
		out.Elem().Set(emptyLists(v.Elem()))
		return out
	case reflect.Struct:
		out := reflect.New(v.Type()).Elem()
		out.Set(v)
		for i := range v.NumField() {
			if f := out.Field(i); f.CanSet() {
				f.Set(emptyLists(v.Field(i)))
			}
		}
		return out
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return v // []byte encodes as a string
		}
		if v.IsNil() {
			return reflect.MakeSlice(v.Type(), 0, 0)
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			out.Index(i).Set(emptyLists(v.Index(i)))
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			out.SetMapIndex(it.Key(), emptyLists(it.Value()))
		}
		return out
	}
	return v
}
