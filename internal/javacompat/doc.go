// Package javacompat is the arithmetic and text formatting compactd shares
// with Java, so that what it writes (partition directory names, values cast
// to STRING, split instants) is byte for byte what Java Paimon writes:
//
//   - floor.go: Math.floorDiv and Math.floorMod (FloorDiv, FloorMod), the
//     only way compactd splits instants into coarser units.
//   - float.go: Float.toString and Double.toString (FloatString).
//   - date.go: epoch days to civil dates and back (CivilFromDays,
//     UnixDate) and the text forms of dates, times and timestamps:
//     LocalDate/LocalDateTime.toString (LocalDateString,
//     LocalDateTimeString) and Paimon's DateTimeUtils (FormatDate,
//     FormatTime, FormatTimestamp), plus the SQL text that partition names
//     use (FormatSQLTime, FormatSQLTimestamp).
//   - text.go: String.trim (Trim), Character.isWhitespace (IsWhitespace)
//     and StringUtils.isBlank (IsBlank).
//
// It imports only the standard library, so every layer may use it; the
// Paimon-typed wrappers (table.Timestamp, the schema-evolution casts of
// table/datafile) live with their types and call it.
package javacompat
