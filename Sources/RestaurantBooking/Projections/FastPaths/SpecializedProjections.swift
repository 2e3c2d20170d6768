import EventLog

// The two table projections as `AppSchema.restaurantBooking` folds them: each a concrete
// `Projection` that holds its `TableProjection` and calls it, so that the compiler specializes the
// table engine's generic code for the row type. Listing `BookingsProjection.table` and
// `RestaurantsProjection.table` themselves (an `any Projection` of a generic type, folded through
// its unspecialized code) made replay 1.143× the CPU per event (0.952–1.389, 16 alternating pairs
// at 500k events; Benchmarks/Results/2026-12-02, `replay-pairs3.txt`).

extension BookingsProjection {
  /// The bookings projection as the schema folds it.
  static let specialized: any Projection = Specialized()

  struct Specialized: Projection {
    /// Held by every copy: reading the static for each event would retain it.
    private let table = BookingsProjection.table
    var name: String { table.name }
    var version: UInt32 { table.version }
    var tables: [String] { table.tables }
    func apply(_ event: RecordedEvent, to state: ProjectionWriter) throws {
      try table.apply(event, to: state)
    }
    func shownFields(ofEntryIn table: String, value: [UInt8]) throws -> [ShownField]? {
      try self.table.shownFields(ofEntryIn: table, value: value)
    }
  }
}

extension RestaurantsProjection {
  /// The restaurants projection as the schema folds it.
  static let specialized: any Projection = Specialized()

  struct Specialized: Projection {
    /// Held by every copy: reading the static for each event would retain it.
    private let table = RestaurantsProjection.table
    var name: String { table.name }
    var version: UInt32 { table.version }
    var tables: [String] { table.tables }
    func apply(_ event: RecordedEvent, to state: ProjectionWriter) throws {
      try table.apply(event, to: state)
    }
    func shownFields(ofEntryIn table: String, value: [UInt8]) throws -> [ShownField]? {
      try self.table.shownFields(ofEntryIn: table, value: value)
    }
  }
}
