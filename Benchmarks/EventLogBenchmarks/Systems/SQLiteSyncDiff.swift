import Foundation
import RestaurantBooking

/// `sync.diff` in SQLite: the snapshot goes into a temporary table, three joins find the added,
/// changed and removed restaurants, and each difference is appended as an event and applied to
/// the `restaurants` table, with a closing refresh event, all in one durable transaction.
final class SQLiteSyncDiff {
  let log: SQLiteLog
  private let insertRemote: SQLiteStatement
  private let addedQuery: SQLiteStatement
  private let updatedQuery: SQLiteStatement
  private let removedQuery: SQLiteStatement
  private let catalogVersion: SQLiteStatement

  init(log: SQLiteLog) throws {
    self.log = log
    try log.database.execute(
      "CREATE TEMP TABLE IF NOT EXISTS remote(id BLOB PRIMARY KEY, name TEXT NOT NULL, cuisine TEXT NOT NULL) WITHOUT ROWID"
    )
    insertRemote = try log.database.prepare("INSERT INTO remote(id, name, cuisine) VALUES (?, ?, ?)")
    addedQuery = try log.database.prepare(
      "SELECT r.id, r.name, r.cuisine FROM remote r WHERE NOT EXISTS (SELECT 1 FROM restaurants l WHERE l.id = r.id)"
    )
    updatedQuery = try log.database.prepare(
      """
      SELECT l.id, l.name, l.cuisine, r.name, r.cuisine FROM remote r JOIN restaurants l ON l.id = r.id
      WHERE l.name <> r.name OR l.cuisine <> r.cuisine
      """)
    catalogVersion = try log.database.prepare("SELECT coalesce(max(version), 0) FROM events WHERE stream = ?")
    removedQuery = try log.database.prepare(
      "SELECT l.id, l.name, l.cuisine FROM restaurants l WHERE NOT EXISTS (SELECT 1 FROM remote r WHERE r.id = l.id)"
    )
  }

  /// Diffs `rows` against the table and appends the differences.
  /// - Returns: the counts, as `RefreshSummary` prints them for the other systems.
  func refresh(with rows: [RemoteRestaurant]) throws -> String {
    return try log.transaction {
      try log.database.execute("DELETE FROM remote")
      for row in rows {
        try insertRemote.bind(1, row.id)
        try insertRemote.bind(2, row.name)
        try insertRemote.bind(3, row.cuisine)
        try insertRemote.run()
      }
      var changes: [MixedEvent] = []
      defer { addedQuery.reset() }
      while try addedQuery.step() {
        let q = addedQuery
        changes.append(
          .restaurantAdded(
            RemoteRestaurant(id: try q.uuid(0), name: q.text(1) ?? "", cuisine: q.text(2) ?? "")))
      }
      let added = changes.count
      defer { updatedQuery.reset() }
      while try updatedQuery.step() {
        let q = updatedQuery
        let id = try q.uuid(0)
        changes.append(
          .restaurantUpdated(
            id: id, old: RemoteRestaurant(id: id, name: q.text(1) ?? "", cuisine: q.text(2) ?? ""),
            new: RemoteRestaurant(id: id, name: q.text(3) ?? "", cuisine: q.text(4) ?? "")))
      }
      let updated = changes.count - added
      defer { removedQuery.reset() }
      while try removedQuery.step() {
        let q = removedQuery
        changes.append(
          .restaurantRemoved(
            RemoteRestaurant(id: try q.uuid(0), name: q.text(1) ?? "", cuisine: q.text(2) ?? "")))
      }
      let removed = changes.count - added - updated
      let unchanged = rows.count - added - updated
      changes.append(
        .restaurantsRefreshed(added: added, updated: updated, removed: removed, unchanged: unchanged))
      let recordedAt = Int64(Date().timeIntervalSince1970 * 1_000_000)
      // The catalog stream's version, for the appended events (the expected-version check).
      try catalogVersion.bind(1, MixedEventRecord.catalogStream)
      defer { catalogVersion.reset() }
      var version = try catalogVersion.step() ? UInt64(catalogVersion.int64(0)) : 0
      for change in changes {
        version += 1
        try log.apply(
          MixedEventRecord(
            eventID: FixtureIDs.now(), stream: MixedEventRecord.catalogStream, version: version, event: change
          ),
          recordedAt: recordedAt)
      }
      try log.database.execute("DELETE FROM remote")
      return "added=\(added) updated=\(updated) removed=\(removed) unchanged=\(unchanged)"
    }
  }
}
