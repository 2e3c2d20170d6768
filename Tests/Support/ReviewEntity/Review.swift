import EventLog
import Foundation

/// A restaurant review: the test entity of the convergence checks. Written as
/// `Docs/AddingAnEntity.md` teaches (a `TableProjection` with create, update and delete handlers,
/// one stream per review) and nothing more: its rows converge across devices by the table
/// engine's rule alone. Posted, then edited field by field by separate event types (rating, title,
/// text), then deleted.
public struct Review: Identifiable, Hashable, Codable, TableRow, Sendable {
  /// The review's ID (its stream is `review-<id>`).
  public var id: UUID
  /// The restaurant reviewed.
  public var restaurantID: UUID
  /// Who wrote it.
  public var author: String
  /// 1 to 5 stars.
  public var rating: Int
  /// Its title.
  public var title: String
  /// Its text.
  public var text: String
  /// When it was posted.
  public var postedAt: Date

  /// A review.
  public init(
    id: UUID, restaurantID: UUID, author: String, rating: Int, title: String, text: String, postedAt: Date
  ) {
    self.id = id
    self.restaurantID = restaurantID
    self.author = author
    self.rating = rating
    self.title = title
    self.text = text
    self.postedAt = postedAt
  }
}

/// A review posted: the first event of the stream `review-<id>`.
public struct ReviewPosted: EventPayload, Hashable {
  /// The stored type name.
  public static let eventType = "ReviewPosted"
  /// The review as posted.
  public var review: Review
  /// The event.
  public init(review: Review) { self.review = review }
}

/// A review's rating changed.
public struct ReviewRated: EventPayload, Hashable {
  /// The stored type name.
  public static let eventType = "ReviewRated"
  /// The review.
  public var id: UUID
  /// The new rating.
  public var rating: Int
  /// The event.
  public init(id: UUID, rating: Int) {
    self.id = id
    self.rating = rating
  }
}

/// A review's title changed.
public struct ReviewRetitled: EventPayload, Hashable {
  /// The stored type name.
  public static let eventType = "ReviewRetitled"
  /// The review.
  public var id: UUID
  /// The new title.
  public var title: String
  /// The event.
  public init(id: UUID, title: String) {
    self.id = id
    self.title = title
  }
}

/// A review's text changed.
public struct ReviewReworded: EventPayload, Hashable {
  /// The stored type name.
  public static let eventType = "ReviewReworded"
  /// The review.
  public var id: UUID
  /// The new text.
  public var text: String
  /// The event.
  public init(id: UUID, text: String) {
    self.id = id
    self.text = text
  }
}

/// A review deleted: the last event of its stream.
public struct ReviewDeleted: EventPayload, Hashable {
  /// The stored type name.
  public static let eventType = "ReviewDeleted"
  /// The review.
  public var id: UUID
  /// The event.
  public init(id: UUID) { self.id = id }
}

/// The reviews' read model: rows by ID, newest first per restaurant, and by rating.
public enum Reviews {
  /// Per restaurant, by the time posted.
  public static let byRestaurant = TableIndex<Review>(
    "by-restaurant", .compound(.uuid(\.restaurantID), .date(\.postedAt)))
  /// By rating (an index whose key the updates move).
  public static let byRating = TableIndex<Review>("by-rating", .int(\.rating))
  /// The projection.
  public static let projection = TableProjection<Review>(
    name: "reviews", version: 1, primaryKey: .uuid(\.id), indexes: [byRestaurant, byRating],
    handlers: [
      .create(ReviewPosted.self) { $0.review },
      .update(ReviewRated.self, key: \.id) { review, event in review.rating = event.rating },
      .update(ReviewRetitled.self, key: \.id) { review, event in review.title = event.title },
      .update(ReviewReworded.self, key: \.id) { review, event in review.text = event.text },
      .delete(ReviewDeleted.self, key: \.id),
    ])

  /// The stream of review `id`.
  public static func stream(_ id: UUID) -> StreamID { StreamID("review-\(id.lowercasedString)") }

  /// Whether `stream` is a review's: the streams that replicate.
  @Sendable public static func isReview(_ stream: StreamID) -> Bool { stream.rawValue.hasPrefix("review-") }

  /// The reviews as an app's data: their event types, the projection, and their streams shared
  /// between devices.
  public static let schema = AppSchema(
    name: "reviews",
    eventTypes: [
      ReviewPosted.self, ReviewRated.self, ReviewRetitled.self, ReviewReworded.self, ReviewDeleted.self,
    ],
    projections: [projection], replicatedStreams: AppSchema.StreamSelection(prefixes: ["review-"]))

  /// The rows the convergent rule gives `events`, worked out without the table engine (the
  /// checks' oracle): for each review, its events sorted by stamp (recorded-at to the microsecond,
  /// then the event ID's bytes), folded from no row; an update of no row changes nothing.
  public static func expectedRows(_ events: [RecordedEvent]) throws -> [Review] {
    var byReview: [UUID: [RecordedEvent]] = [:]
    for event in events {
      let id: UUID
      switch event.type {
      case ReviewPosted.eventType: id = try event.decode(ReviewPosted.self).review.id
      case ReviewRated.eventType: id = try event.decode(ReviewRated.self).id
      case ReviewRetitled.eventType: id = try event.decode(ReviewRetitled.self).id
      case ReviewReworded.eventType: id = try event.decode(ReviewReworded.self).id
      case ReviewDeleted.eventType: id = try event.decode(ReviewDeleted.self).id
      default: continue
      }
      byReview[id, default: []].append(event)
    }
    var rows: [Review] = []
    for (_, events) in byReview {
      var row: Review?
      for event in events.sorted(by: stampOrder) {
        switch event.type {
        case ReviewPosted.eventType: row = try event.decode(ReviewPosted.self).review
        case ReviewRated.eventType: row?.rating = try event.decode(ReviewRated.self).rating
        case ReviewRetitled.eventType: row?.title = try event.decode(ReviewRetitled.self).title
        case ReviewReworded.eventType: row?.text = try event.decode(ReviewReworded.self).text
        default: row = nil
        }
      }
      if let row { rows.append(row) }
    }
    return rows.sorted { $0.id.uuidString < $1.id.uuidString }
  }

  /// Whether `a` comes before `b` in stamp order: recorded-at to the microsecond, then the ID's bytes.
  public static func stampOrder(_ a: RecordedEvent, _ b: RecordedEvent) -> Bool {
    let (x, y) = (a.recordedAt.microsecondsSince1970, b.recordedAt.microsecondsSince1970)
    if x != y { return x < y }
    return withUnsafeBytes(of: a.id.uuid) { a in
      withUnsafeBytes(of: b.id.uuid) { b in a.lexicographicallyPrecedes(b) }
    }
  }
}
