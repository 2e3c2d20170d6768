// swift-tools-version: 6.0
import PackageDescription

let package = Package(
  name: "EventSourcedDataLayer",
  platforms: [.macOS(.v15)],
  products: [
    .library(name: "LMDB", targets: ["LMDB"]),
    .library(name: "EventLog", targets: ["EventLog"]),
    .library(name: "Sodium", targets: ["Sodium"]),
    .library(name: "RestaurantBooking", targets: ["RestaurantBooking"]),
    .library(name: "Postgres", targets: ["Postgres"]),
    .library(name: "Replication", targets: ["Replication"]),
    .library(name: "ReplicationPostgres", targets: ["ReplicationPostgres"]),
    .library(name: "ReplicationSupabase", targets: ["ReplicationSupabase"]),
    .library(name: "EventLogCLI", targets: ["EventLogCLI"]),
    .executable(name: "eventlog", targets: ["eventlog"]),
    .executable(name: "eventlog-benchmarks", targets: ["EventLogBenchmarks"]),
    .executable(name: "eventlog-stress", targets: ["EventLogStress"]),
    .executable(name: "review-device", targets: ["ReviewDevice"]),
    .executable(name: "user-eventlog", targets: ["UserEventLog"]),
    // Test support: the power-cut shim, loaded with LD_PRELOAD into the processes of a test.
    .library(name: "EventLogPowerCut", type: .dynamic, targets: ["PowerCutShim"]),
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
    // libcurl's C API from the system library (Debian: libcurl4-openssl-dev). Only `HTTP` imports it.
    .systemLibrary(
      name: "CCurl",
      path: "Sources/CCurl",
      pkgConfig: "libcurl",
      providers: [.apt(["libcurl4-openssl-dev"]), .brew(["curl"])]
    ),
    // A small HTTP client over libcurl (GET and POST) with a hard body cap, timeouts, cancellation and
    // no redirect followed.
    .target(name: "HTTP", dependencies: ["CCurl"]),
    // libpq's C API from the system library (Debian: libpq-dev). Only `Postgres` imports it, and the
    // benchmark's hand-written libpq baseline.
    .systemLibrary(
      name: "CLibPQ",
      path: "Sources/CLibPQ",
      pkgConfig: "libpq",
      providers: [.apt(["libpq-dev"]), .brew(["libpq"])]
    ),
    // The one rule that cuts secrets (a password, an API key, a token, in whole or in part) out of
    // a server's or a library's words before an error keeps them.
    .target(name: "Redaction"),
    // A small PostgreSQL client over libpq: parameterized statements, copied results, deadlines,
    // reconnection, LISTEN/NOTIFY, PostgresError with SQLSTATE.
    .target(name: "Postgres", dependencies: ["CLibPQ", "Redaction"]),
    // libsodium's C API from the system library (Debian: libsodium-dev). Only `Sodium` imports it.
    .systemLibrary(
      name: "CSodium",
      path: "Sources/CSodium",
      pkgConfig: "libsodium",
      providers: [.apt(["libsodium-dev"]), .brew(["libsodium"])]
    ),
    // The hashes, signatures, authenticated encryption and random bytes the audit chain and sealed
    // fields use (BLAKE2b, SHA-256, Ed25519, XChaCha20-Poly1305), over libsodium.
    .target(name: "Sodium", dependencies: ["CSodium"]),
    // CRC-32C with the processor's instruction (SSE 4.2, ARMv8 CRC). Only `Checksum` imports it.
    .target(name: "CCRC32C"),
    // CRC-32C: the processor's instruction when there is one, else slicing-by-8 tables.
    .target(name: "Checksum", dependencies: ["CCRC32C"]),
    // The payload codec: the binary encoder, decoder and reader, the JSON reader and writer, and
    // the payload layouts (recorded, probed, evolved, transcoded). Knows no event store.
    .target(name: "PayloadCoding"),
    // The generic event store: records, append, reads, subscriptions, projections, replay, over the
    // payload codec (which `import EventLog` brings along).
    .target(name: "EventLog", dependencies: ["PayloadCoding", "LMDB", "Checksum", "Sodium"]),
    // Replication through a server: outbox push, ordered pull, live mode; generic over the
    // transport and the domain.
    .target(name: "Replication", dependencies: ["EventLog", "Sodium"]),
    // The PostgreSQL transport of replication: the server schema (versioned SQL) and libpq calls.
    .target(name: "ReplicationPostgres", dependencies: ["Replication", "Postgres", "EventLog"]),
    // The HTTPS transport of replication: Supabase's API (PostgREST `rpc/`) calling the same SQL
    // functions with the signed-in user's access token, over the libcurl client.
    .target(name: "ReplicationSupabase", dependencies: ["Replication", "HTTP", "EventLog", "Redaction"]),
    // The restaurant-booking domain: models, events, projections, repositories, view models.
    .target(name: "RestaurantBooking", dependencies: ["EventLog", "HTTP", "Redaction"]),
    // The command line of any app's log: argument parsing, the generic commands and the plug-in
    // protocol an app's own commands use, as a library so that tests and apps can call it.
    .target(
      name: "EventLogCLI",
      dependencies: ["EventLog", "Sodium", "Replication", "ReplicationPostgres", "ReplicationSupabase"]),
    // The example domain's commands for the command line (`restaurants …`, `bookings …`), a plug-in.
    .target(name: "RestaurantBookingCLI", dependencies: ["EventLogCLI", "RestaurantBooking", "EventLog"]),
    // The composition root of the shipped `eventlog`: the example's schema and plug-in, PostgreSQL
    // or a Supabase project's API.
    .executableTarget(
      name: "eventlog", dependencies: ["EventLogCLI", "RestaurantBookingCLI", "RestaurantBooking"]),
    // SQLite's C API from the system library, for the benchmark baseline only.
    .systemLibrary(
      name: "CSQLite",
      path: "Benchmarks/CSQLite",
      pkgConfig: "sqlite3",
      providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
    ),
    // Workloads against eventlog, raw LMDB, an append-only LMDB log, SQLite, the naive refresh and
    // hand-written libpq; the replicate workloads start a throwaway PostgreSQL (PostgresTestSupport),
    // and reach it through HTTPS too, with the PostgREST stand-in in front (PostgRESTTestSupport).
    .executableTarget(
      name: "EventLogBenchmarks",
      dependencies: [
        "EventLog", "RestaurantBooking", "Checksum", "Sodium", "TestKit", "CLMDB", "CSQLite", "CLibPQ",
        "Postgres", "Replication", "ReplicationPostgres", "PostgresTestSupport", "ReplicationSupabase",
        "PostgRESTTestSupport",
      ],
      path: "Benchmarks/EventLogBenchmarks"
    ),
    // Test support: a process that appends, reads or holds a reader, for crash and concurrency tests.
    .executableTarget(
      name: "EventLogStress",
      dependencies: ["EventLog", "RestaurantBooking", "TestKit"],
      path: "Tests/Support/EventLogStress"
    ),
    // Test support: the `Review` entity (posted, edited field by field, deleted) of the
    // convergence checks, on EventLog's public API alone, and the rule's oracle.
    .target(name: "ReviewEntity", dependencies: ["EventLog"], path: "Tests/Support/ReviewEntity"),
    // Test support: one device of the review convergence model check; one operation per run
    // (post, edit, delete, push, pull, list, check), so that a test can kill it mid-push or pull.
    .executableTarget(
      name: "ReviewDevice",
      dependencies: ["EventLog", "ReviewEntity", "Replication", "ReplicationPostgres", "TestKit"],
      path: "Tests/Support/ReviewDevice"
    ),
    // Test support: an app's own `eventlog`, for the `User` entity of Tests/UserEntityTests (its two
    // files are linked into the target), built as Docs/CLI.md shows; the CLI tests run it.
    .executableTarget(
      name: "UserEventLog", dependencies: ["EventLogCLI", "EventLog"], path: "Tests/Support/UserEventLog"),
    // What the fuzz target checks of an input (the decoders' properties), shared with the tests that
    // replay the corpus and every input the fuzzer found.
    .target(name: "FuzzChecks", dependencies: ["EventLog", "Checksum"], path: "Tests/Fuzz/FuzzChecks"),
    // Fuzz target for the record and payload decoders (built by .ci/fuzz with the fuzzer sanitizer).
    .executableTarget(name: "EventLogFuzz", dependencies: ["FuzzChecks"], path: "Tests/Fuzz/EventLogFuzz"),
    // Test support shared by the tests and eventlog-stress: temporary directories, running a
    // child process (and a device's environment driven through the built `eventlog`), the FNV-1a
    // fingerprint, SplitMix64.
    .target(name: "TestKit", path: "Tests/Support/TestKit"),
    // Test support: the power-cut shim (C, a dynamic library: product EventLogPowerCut), which a
    // test loads with LD_PRELOAD into `eventlog` to log every write and flush of an environment's
    // data file and to stop the process at a given record; TestKit's PowerCutLog rebuilds the file
    // a power cut leaves. No target depends on it: it would replace the C library's calls there.
    .target(name: "PowerCutShim", path: "Tests/Support/PowerCutShim", linkerSettings: [.linkedLibrary("dl")]),
    // Test support: a loopback HTTP server that answers what a test says, and can misbehave.
    .target(name: "HTTPTestSupport", path: "Tests/Support/HTTPTestSupport"),
    // Test support: a throwaway PostgreSQL server (initdb in a temporary directory, Unix socket).
    .target(
      name: "PostgresTestSupport", dependencies: ["Postgres", "TestKit"],
      path: "Tests/Support/PostgresTestSupport"),
    // Test support: a stand-in for a Supabase project's REST API (gateway + PostgREST) over a
    // throwaway PostgreSQL, Supabase's auth roles and functions, HS256 tokens (SHA-256/HMAC).
    .target(
      name: "PostgRESTTestSupport",
      dependencies: ["Postgres", "PostgresTestSupport", "HTTPTestSupport", "TestKit"],
      path: "Tests/Support/PostgRESTTestSupport"),
    .testTarget(name: "LMDBTests", dependencies: ["LMDB", "TestKit"]),
    .testTarget(name: "PostgresTests", dependencies: ["Postgres", "PostgresTestSupport", "TestKit"]),
    // Replication against real PostgreSQL servers the tests start: schema, push, pull, ordering,
    // owner isolation, failures, convergence.
    .testTarget(
      name: "ReplicationTests",
      dependencies: [
        "Replication", "ReplicationPostgres", "Postgres", "PostgresTestSupport", "EventLog",
        "RestaurantBooking",
        "TestKit", "ReviewEntity", "LMDB", "Checksum", "Sodium",
      ]),
    // Replication through Supabase's API: the HTTPS transport against the PostgREST stand-in over
    // a real PostgreSQL with Supabase's auth pieces (users, tokens, faults, the command line).
    .testTarget(
      name: "SupabaseReplicationTests",
      dependencies: [
        "ReplicationSupabase", "Replication", "ReplicationPostgres", "PostgRESTTestSupport",
        "PostgresTestSupport", "Postgres", "HTTP", "HTTPTestSupport", "EventLog", "RestaurantBooking",
        "TestKit", "Sodium",
      ]),
    .testTarget(name: "HTTPTests", dependencies: ["HTTP", "HTTPTestSupport"]),
    // The PostgREST stand-in against a throwaway PostgreSQL: tokens, calls, errors, faults.
    .testTarget(
      name: "PostgRESTStandInTests",
      dependencies: ["PostgRESTTestSupport", "PostgresTestSupport", "Postgres", "HTTP", "TestKit"]),
    .testTarget(
      name: "EventLogTests",
      dependencies: ["EventLog", "Checksum", "LMDB", "Sodium", "TestKit", "ReviewEntity"]),
    // The `User` entity of Docs/AddingAnEntity.md, on EventLog's public API alone, and its tests.
    .testTarget(name: "UserEntityTests", dependencies: ["EventLog", "TestKit"]),
    // The short form of Docs/AddingAnEntity.md: an entity in one file on the generic repository.
    .testTarget(name: "DiningTableTests", dependencies: ["EventLog", "TestKit"]),
    .testTarget(
      name: "RestaurantBookingTests",
      dependencies: ["RestaurantBooking", "EventLog", "HTTPTestSupport", "TestKit"]),
    // Fixtures/format3: an environment written by the last format-3 build (its README says how).
    .testTarget(
      name: "EventLogCLITests",
      dependencies: ["EventLogCLI", "RestaurantBookingCLI", "EventLog", "RestaurantBooking", "TestKit"],
      resources: [.copy("Fixtures")]),
    // Crashes (kill -9), map growth and dead readers across processes, concurrency.
    .testTarget(
      name: "ReliabilityTests", dependencies: ["EventLog", "RestaurantBooking", "LMDB", "TestKit"]),
    // The benchmark's own checks: every system rebuilds the same read models (fingerprints), and
    // the replicate systems (libpq, hand-written libpq, HTTPS through the PostgREST stand-in) store
    // and pull the same rows (against a throwaway PostgreSQL).
    .testTarget(
      name: "BenchmarkTests",
      dependencies: ["EventLogBenchmarks", "EventLog", "Sodium", "TestKit", "CLMDB", "PostgresTestSupport"]),
    // Damage, hostile remotes, secrets and permissions, decoder fuzz regressions, model check.
    .testTarget(
      name: "HardeningTests",
      dependencies: [
        "EventLog", "Checksum", "RestaurantBooking", "LMDB", "HTTPTestSupport", "TestKit", "FuzzChecks",
        "Redaction",
      ]),
  ],
  swiftLanguageModes: [.v6]
)
