import Foundation
import LMDB

extension EventStore {
  /// Every layout revision the environment recorded, by type, schema version and revision
  /// (none in an environment of an older format opened read-only).
  /// - Complexity: O(k) for k revisions.
  package func layouts() throws -> [RecordedLayout] {
    guard let database = schema.layouts else { return [] }
    return try storage { try environment.read { txn in try LayoutDatabase.all(in: txn, database: database) } }
  }

  /// A transcoder over this store's event types (``AppSchema/eventTypes``) and every layout the
  /// environment has recorded: the one `log --json`, `show` and `export` render payloads with.
  /// It sees the layouts recorded until now; take another to see later ones.
  package func payloadTranscoder() throws -> PayloadTranscoder {
    PayloadTranscoder(eventTypes: appSchema.eventTypes, layouts: try layouts())
  }

  /// The payload of `event` (an event of this store) as JSON, by this store's event types or
  /// the layout its environment recorded (`PayloadTranscoder.json(of:)`).
  package func payloadJSON(of event: RecordedEvent) throws -> PayloadJSON {
    let key = LayoutKey(type: event.type, schemaVersion: event.schemaVersion)
    let revisions = try storage {
      try environment.read { txn in
        try schema.layouts.map { try LayoutDatabase.revisions(of: key, in: txn, database: $0) } ?? []
      }
    }
    return PayloadTranscoder.json(
      of: event, eventTypes: appSchema.eventTypes, layouts: revisions.reversed().map(\.layout))
  }

  /// The event to ingest for a payload that comes as JSON (a server's row): binary when this
  /// store's event types or a layout its environment recorded read it, else kept as JSON
  /// (`PayloadTranscoder.event(id:type:schemaVersion:payloadJSON:metadata:recordedAt:)`).
  /// - Parameters:
  ///   - id: the event's ID.
  ///   - type: its type name.
  ///   - schemaVersion: the schema version whose shape the JSON has.
  ///   - payloadJSON: the payload's JSON text.
  ///   - metadata: correlation, causation and origin.
  ///   - recordedAt: when it was first recorded.
  /// - Returns: the event.
  /// - Throws: `PayloadConversionError` when the text is not JSON or contradicts the type or
  ///   layout that knows it.
  package func event(
    id: UUID, type: String, schemaVersion: UInt16, payloadJSON: Data, metadata: EventMetadata,
    recordedAt: Date?
  ) throws -> NewEvent {
    var transcoder = PayloadTranscoder(eventTypes: appSchema.eventTypes)
    if let database = schema.layouts,
      let layout = try storage({
        try environment.read { txn in
          try LayoutDatabase.latest(
            LayoutKey(type: type, schemaVersion: schemaVersion), in: txn, database: database)
        }
      })
    {
      transcoder.add(layout)
    }
    return try transcoder.event(
      id: id, type: type, schemaVersion: schemaVersion, payloadJSON: payloadJSON, metadata: metadata,
      recordedAt: recordedAt)
  }

  /// Upgrades an environment of format 1 to 4 to format 5, in the open's first write transaction
  /// (another process may have upgraded it meanwhile: then nothing is done). Its records were
  /// rewritten in format 2 before (``chainLegacyRecords(environment:schema:device:)``); from a
  /// format before 4, this also does what format 4 added:
  ///
  /// - Rows: `RowWriter.date` wrote the seconds since 1970, which do not round-trip; format 4
  ///   writes `BinaryEncoder`'s bytes (the seconds since 2001). Every projection's checkpoint is
  ///   dropped, so each is rebuilt: the ones this store registers by this open, the others by the
  ///   first writable open of a build that registers them.
  /// - Layouts: the events stored before are walked once, and the layouts of the event types this
  ///   store registers (``AppSchema/eventTypes``), at their current schema version, recorded as an
  ///   append would have, at the first events that show them.
  static func upgrade(
    from format: UInt32, in txn: WriteTransaction, schema: Schema, payloads: PayloadForms
  ) throws {
    guard let stored = try storedFormat(in: txn, schema: schema), stored < Schema.formatVersion else {
      return
    }
    // Format 5 changed the records only (rewritten before this transaction,
    // `chainLegacyRecords`): the projections and layouts of format 4 stand.
    if stored < 4 {
      try upgradeToFormat4(in: txn, schema: schema, payloads: payloads)
    }
    _ = try txn.delete(forKey: chainUpgradeKey, in: schema.meta)
    try writeFormat(in: txn, schema: schema)
  }

  /// What format 4 added: every projection rebuilt (row dates) and the layouts of the log's
  /// events recorded.
  private static func upgradeToFormat4(
    in txn: WriteTransaction, schema: Schema, payloads: PayloadForms
  ) throws {
    try txn.removeAll(in: schema.checkpoints)
    if let database = schema.layouts, !payloads.eventTypes.typeNames.isEmpty {
      var recorder = LayoutRecorder()
      try txn.withCursor(in: schema.events) { cursor in
        var found = try cursor.move(.first)
        while found {
          let sequence = cursor.key.loadUnaligned(as: UInt64.self)
          let event = try RecordCodec.decode(cursor.value, sequence: sequence)
          if event.payloadEncoding == .binary,
            payloads.eventTypes.schemaVersion(of: event.type) == event.schemaVersion
          {
            try recorder.record(
              LayoutKey(type: event.type, schemaVersion: event.schemaVersion), payload: event.payload,
              at: sequence, proposed: { try? payloads.eventTypes.binaryPayload(of: event)?.layout?.layout },
              cache: payloads.cache, database: database, in: txn)
          }
          found = try cursor.move(.next)
        }
      }
    }
  }
}
