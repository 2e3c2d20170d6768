// swift-tools-version: 6.0
import PackageDescription

let package = Package(
  name: "EventSourcedDataLayer",
  platforms: [.macOS(.v15)],
  products: [
    .library(name: "LMDB", targets: ["LMDB"]),
    .library(name: "EventLog", targets: ["EventLog"]),
    .library(name: "RestaurantBooking", targets: ["RestaurantBooking"]),
  ],
  targets: [
    // The C API of LMDB, from the system library (Debian: liblmdb-dev). Only `LMDB` imports it.
    .systemLibrary(
      name: "CLMDB",
      path: "Sources/CLMDB",
      pkgConfig: "lmdb",
      providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"])]
    ),
    // A thin, safe wrapper: environment, transactions, databases, cursors, LMDBError.
    .target(name: "LMDB", dependencies: ["CLMDB"]),
    // The generic event store: records, codec, append, reads, subscriptions, projections, replay.
    .target(name: "EventLog", dependencies: ["LMDB"]),
    // The restaurant-booking domain: models, events, projections, repositories, view models.
    .target(name: "RestaurantBooking", dependencies: ["EventLog"]),
    .testTarget(name: "LMDBTests", dependencies: ["LMDB"]),
    .testTarget(name: "EventLogTests", dependencies: ["EventLog", "LMDB"]),
    .testTarget(name: "RestaurantBookingTests", dependencies: ["RestaurantBooking", "EventLog"]),
  ],
  swiftLanguageModes: [.v6]
)
