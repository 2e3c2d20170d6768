import Foundation
import RestaurantBooking

/// The `sync.diff` data: a local catalog of R restaurants and a remote snapshot of R rows of which
/// 1% differ: 0.5% renamed or with another cuisine, 0.25% removed, 0.25% added.
struct SyncScenario: Sendable {
  var local: [RemoteRestaurant]
  var remote: [RemoteRestaurant]
  var added: Int
  var updated: Int
  var removed: Int

  var unchanged: Int { remote.count - added - updated }

  init(size: Int) {
    var rng = SplitMix64(seed: Fixtures.seed ^ 0x5C)
    local = (0..<size).map { Fixtures.restaurant(&rng, index: $0) }
    var remote: [RemoteRestaurant] = []
    remote.reserveCapacity(size)
    var updated = 0
    var removed = 0
    for (index, row) in local.enumerated() {
      if index % 400 == 1 {
        removed += 1
        continue
      }
      var row = row
      if index % 200 == 0 {
        updated += 1
        if index % 400 == 0 {
          row.name += " (new)"
        } else {
          row.cuisine = row.cuisine == "Thai" ? "Greek" : "Thai"
        }
      }
      remote.append(row)
    }
    let added = size - remote.count
    for index in 0..<added {
      remote.append(Fixtures.restaurant(&rng, index: size + index))
    }
    // PostgREST sends the snapshot `order=id.asc`: PostgreSQL orders UUIDs by their bytes.
    self.remote = remote.sorted { Self.precedes($0.id, $1.id) }
    self.added = added
    self.updated = updated
    self.removed = removed
  }

  /// Bytewise UUID order (PostgreSQL's and LMDB's).
  static func precedes(_ a: UUID, _ b: UUID) -> Bool {
    withUnsafeBytes(of: a.uuid) { x in
      withUnsafeBytes(of: b.uuid) { y in
        let a0 = UInt64(bigEndian: x.loadUnaligned(as: UInt64.self))
        let b0 = UInt64(bigEndian: y.loadUnaligned(as: UInt64.self))
        if a0 != b0 { return a0 < b0 }
        return UInt64(bigEndian: x.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
          < UInt64(bigEndian: y.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
      }
    }
  }

  /// The expected outcome, to check each system did the whole job.
  var expectedCheck: String { "added=\(added) updated=\(updated) removed=\(removed) unchanged=\(unchanged)" }
}
