import EventLog
import Foundation

/// The differences between the catalog and a complete fetched snapshot, by remote ID.
///
/// ```swift
/// let diff = RestaurantDiff.compute(current: catalog, fetched: snapshot)
/// diff.summary   // added, updated, removed, unchanged
/// ```
///
/// A row is unchanged when its name and cuisine are equal, string for string, to the catalog's;
/// how the row was laid out on the wire (key order, white space) plays no part.
public struct RestaurantDiff: Sendable, Equatable {
  /// A restaurant whose fetched row differs from the catalog.
  public struct Update: Sendable, Hashable {
    /// The restaurant as the catalog has it.
    public var old: Restaurant
    /// The fetched row.
    public var new: RemoteRestaurant
  }

  /// Fetched rows whose ID is not in the catalog, in fetched order.
  public var added: [RemoteRestaurant] = []
  /// Fetched rows whose name or cuisine changed, in fetched order.
  public var updated: [Update] = []
  /// Catalog restaurants missing from the snapshot, in catalog order.
  public var removed: [Restaurant] = []
  /// Fetched rows equal to the catalog.
  public var unchanged = 0

  /// The counts.
  public var summary: RefreshSummary {
    RefreshSummary(added: added.count, updated: updated.count, removed: removed.count, unchanged: unchanged)
  }

  /// Whether the snapshot equals the catalog.
  public var isEmpty: Bool { added.isEmpty && updated.isEmpty && removed.isEmpty }

  /// Diffs a complete snapshot against the catalog in one pass over each, by remote ID.
  ///
  /// - Parameters:
  ///   - current: the catalog (IDs unique, any order).
  ///   - fetched: the complete snapshot; IDs are expected to be unique (the sources reject
  ///     duplicates); a repeated ID is counted once, at its first row.
  /// - Returns: the restaurants added, updated and removed, and the number unchanged.
  /// - Complexity: O(n + m) time and O(n + m) memory for n restaurants and m rows.
  public static func compute(current: [Restaurant], fetched: [RemoteRestaurant]) -> RestaurantDiff {
    if isSortedByID(current.lazy.map(\.id)), isSortedByID(fetched.lazy.map(\.id)) {
      return merge(current: current, fetched: fetched)
    }
    var diff = RestaurantDiff()
    var byID = [UUID: Int](minimumCapacity: current.count)
    for (index, restaurant) in current.enumerated() { byID[restaurant.id] = index }
    var seen = [Bool](repeating: false, count: current.count)
    var fetchedIDs = Set<UUID>(minimumCapacity: fetched.count)
    for row in fetched {
      guard fetchedIDs.insert(row.id).inserted else { continue }
      guard let index = byID[row.id] else {
        diff.added.append(row)
        continue
      }
      seen[index] = true
      let old = current[index]
      if old.name == row.name && old.cuisine.rawValue == row.cuisine {
        diff.unchanged += 1
      } else {
        diff.updated.append(Update(old: old, new: row))
      }
    }
    for (index, restaurant) in current.enumerated() where !seen[index] {
      diff.removed.append(restaurant)
    }
    return diff
  }

  /// The order of `id` as LMDB and PostgreSQL sort UUIDs: bytewise.
  @inline(__always) static func orderKey(_ id: UUID) -> (high: UInt64, low: UInt64) { id.byteOrder }

  static func isSortedByID<C: Collection>(_ ids: C) -> Bool where C.Element == UUID {
    var previous: (high: UInt64, low: UInt64)?
    for id in ids {
      let key = orderKey(id)
      if let previous, key < previous { return false }
      previous = key
    }
    return true
  }

  /// Both inputs sorted by ID: one merge pass, no hashing.
  static func merge(current: [Restaurant], fetched: [RemoteRestaurant]) -> RestaurantDiff {
    var diff = RestaurantDiff()
    var i = 0
    var previous: (high: UInt64, low: UInt64)?
    for row in fetched {
      let key = orderKey(row.id)
      if let previous, previous == key { continue }
      previous = key
      while i < current.count, orderKey(current[i].id) < key {
        diff.removed.append(current[i])
        i += 1
      }
      if i < current.count, orderKey(current[i].id) == key {
        let old = current[i]
        i += 1
        if old.name == row.name && old.cuisine.rawValue == row.cuisine {
          diff.unchanged += 1
        } else {
          diff.updated.append(Update(old: old, new: row))
        }
      } else {
        diff.added.append(row)
      }
    }
    while i < current.count {
      diff.removed.append(current[i])
      i += 1
    }
    return diff
  }

  /// The events of the diff, then one ``RestaurantsRefreshed``, all with `metadata`: what a
  /// refresh appends to `restaurant-catalog`.
  ///
  /// - Parameters:
  ///   - source: where the snapshot came from, without credentials.
  ///   - fetchedAt: when it was fetched.
  ///   - metadata: the origin and the sync's correlation ID.
  /// - Returns: the added, updated and removed restaurants' events, in that order, then the
  ///   ``RestaurantsRefreshed``.
  /// - Throws: `EncodingError` when a payload cannot be encoded.
  /// - Complexity: O(k) for k changes.
  public func events(source: String, fetchedAt: Date, metadata: EventMetadata) throws -> [NewEvent] {
    var events: [NewEvent] = []
    events.reserveCapacity(added.count + updated.count + removed.count + 1)
    for row in added {
      events.append(
        try NewEvent(
          RestaurantAdded(restaurantID: row.id, name: row.name, cuisine: row.cuisine), metadata: metadata))
    }
    for update in updated {
      let oldCuisine = update.old.cuisine.rawValue
      let event = RestaurantUpdated(
        restaurantID: update.old.id,
        name: update.old.name == update.new.name
          ? nil : RestaurantUpdated.Change(old: update.old.name, new: update.new.name),
        cuisine: oldCuisine == update.new.cuisine
          ? nil : RestaurantUpdated.Change(old: oldCuisine, new: update.new.cuisine))
      events.append(try NewEvent(event, metadata: metadata))
    }
    for restaurant in removed {
      events.append(
        try NewEvent(
          RestaurantRemoved(
            restaurantID: restaurant.id, name: restaurant.name, cuisine: restaurant.cuisine.rawValue),
          metadata: metadata))
    }
    let summary = self.summary
    let refreshed = RestaurantsRefreshed(
      source: source, fetchedAt: fetchedAt, fetched: summary.added + summary.updated + summary.unchanged,
      added: summary.added, updated: summary.updated, removed: summary.removed, unchanged: summary.unchanged)
    events.append(try NewEvent(refreshed, metadata: metadata))
    return events
  }
}
