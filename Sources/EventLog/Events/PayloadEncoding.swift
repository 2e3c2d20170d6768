/// How an event's payload is stored.
public enum PayloadEncoding: UInt8, Sendable, Hashable, CaseIterable {
  /// `BinaryEncoder`'s positional bytes: what every event this app appends holds.
  case binary = 0
  /// JSON text in the export's form (record flag bit 2, `Docs/OnDiskFormat.md`): an event that
  /// arrived (by a pull or an import) of a type and schema version this store could not encode in
  /// binary, because neither its registry nor a recorded layout knows it. The projections fold
  /// it, decoded from its JSON, once a build that knows the type reads the log; until then it is
  /// skipped as unreadable.
  case json = 1
}
