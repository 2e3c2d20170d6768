import Foundation
import Postgres
import Synchronization
import TestKit

#if canImport(Glibc)
  import Glibc
#endif

/// A throwaway PostgreSQL server for tests and benchmarks: `initdb` in a temporary directory,
/// listening only on a Unix socket there (no TCP port), run as the `postgres` user through
/// `runuser` when this process is root (initdb refuses root).
///
/// Local connections by the superuser `postgres` are trusted; every other role logs in with its
/// password (SCRAM), so a wrong password fails as it would on a real server. `fsync` is off: the
/// server is stopped or restarted by these tests, never by a power cut; commits stay
/// synchronous, so an immediate stop (a crash of the server) loses no acknowledged commit.
///
/// A watchdog process stops the server and removes its directory when this process ends, even
/// when it is killed, so no server outlives its test run.
public final class PostgresTestServer: Sendable {
  /// Where the server's binaries are: `$EVENTLOG_PG_BINDIR`, else `pg_config --bindir`, else the
  /// newest `/usr/lib/postgresql/*/bin`; `nil` when no `initdb` is found.
  public static let binDirectory: String? = {
    var candidates: [String] = []
    if let dir = ProcessInfo.processInfo.environment["EVENTLOG_PG_BINDIR"], !dir.isEmpty {
      candidates.append(dir)
    }
    if let run = try? runChild("/usr/bin/env", ["pg_config", "--bindir"]), run.status == 0 {
      candidates.append(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    }
    let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
    for version in versions.sorted(by: { (Int($0) ?? 0) > (Int($1) ?? 0) }) {
      candidates.append("/usr/lib/postgresql/\(version)/bin")
    }
    return candidates.first { FileManager.default.isExecutableFile(atPath: "\($0)/initdb") }
  }()

  /// Why the server cannot run here, or `nil` when it can.
  public static var unavailableReason: String? {
    binDirectory == nil
      ? "no PostgreSQL server binaries (initdb) found: install the 'postgresql' package (bash .ci/setup does)"
      : nil
  }

  /// The directory holding the data directory, the socket and the log.
  public let directory: String
  /// The directory of the Unix socket.
  public var socketDirectory: String { directory }
  /// The port number in the socket's name (`.s.PGSQL.<port>`); nothing listens on TCP.
  public let port: Int
  private let binDirectory: String
  /// The numbers of ``uniqueName(_:)``, one counter for the process: two instances on one server
  /// (the shared one, and one attached to it by code under test) must not make the same name.
  private static let names = Mutex(0)

  private static let sharedServer = Mutex<Result<PostgresTestServer, any Error>?>(nil)

  /// One server for the whole process, started on first use. Tests take a database of their
  /// own from it (``createDatabase(owner:)``).
  public static func shared() throws -> PostgresTestServer {
    try sharedServer.withLock { shared in
      if let shared { return try shared.get() }
      let result = Result { try PostgresTestServer() }
      shared = result
      return try result.get()
    }
  }

  /// Starts a server of its own (for tests that stop or restart it).
  public init() throws {
    guard let binDirectory = Self.binDirectory else {
      throw ServerFailure(Self.unavailableReason ?? "no PostgreSQL server")
    }
    self.binDirectory = binDirectory
    // Short: a Unix socket path has at most 107 bytes.
    let base = "/tmp/eventlog-pg-\(UUID().uuidString.prefix(8).lowercased())"
    directory = base
    port = 40_000 + Int.random(in: 0..<20_000)
    try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: false)
    if getuid() == 0 {
      guard let user = getpwnam("postgres") else {
        throw ServerFailure("running as root, but there is no 'postgres' user to run the server as")
      }
      guard chown(base, user.pointee.pw_uid, user.pointee.pw_gid) == 0 else {
        throw ServerFailure("cannot hand \(base) to the postgres user (errno \(errno))")
      }
    }
    try chmodOrThrow(base, 0o700)
    try run("initdb", ["-D", "\(base)/data", "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"])
    let hba = """
      local all postgres trust
      local all all scram-sha-256

      """
    try writeAsServerUser(hba, to: "\(base)/data/pg_hba.conf")
    startWatchdog()
    try start()
  }

  /// The server that another process started with ``init()``, found by its ``directory`` and
  /// ``port``: for that process's children (the benchmark's measuring processes), with the same
  /// URLs and helpers. It neither starts nor stops the server, and has no watchdog: the process
  /// that started the server stops it (and its watchdog does when that process dies). Never call
  /// ``destroy()`` or ``stop(immediate:)`` on it.
  /// - Throws: ``ServerFailure`` when no PostgreSQL binaries are installed.
  public init(attachingTo directory: String, port: Int) throws {
    guard let binDirectory = Self.binDirectory else {
      throw ServerFailure(Self.unavailableReason ?? "no PostgreSQL server")
    }
    self.binDirectory = binDirectory
    self.directory = directory
    self.port = port
  }

  /// `postgres --version` of the server's binaries (`postgres (PostgreSQL) 15.14 (Debian …)`),
  /// or `nil` when it cannot be run.
  public var serverVersion: String? {
    let output = "\(directory)/version.out"
    guard let status = try? spawn(["\(binDirectory)/postgres", "--version"], output: output, wait: true),
      status == 0, let text = try? String(contentsOfFile: output, encoding: .utf8)
    else { return nil }
    return text.trimmingCharacters(in: .whitespacesAndNewlines)
  }

  /// Starts the server (after ``stop(immediate:)``).
  public func start() throws {
    try run(
      "pg_ctl",
      [
        "-D", "\(directory)/data", "-l", "\(directory)/server.log", "-w", "-t", "60", "-o",
        "-k \(directory) -p \(port) -c listen_addresses='' -c fsync=off"
          + " -c full_page_writes=off -c max_connections=200",
        "start",
      ])
  }

  /// Stops the server: `immediate` as a crash would (no shutdown checkpoint), else cleanly.
  public func stop(immediate: Bool = false) throws {
    try run("pg_ctl", ["-D", "\(directory)/data", "-m", immediate ? "immediate" : "fast", "-w", "stop"])
  }

  /// Stops the server and removes its directory.
  public func destroy() {
    try? stop()
    try? FileManager.default.removeItem(atPath: directory)
  }

  /// A URL for `user` (with `password`) on `database`.
  public func url(user: String = "postgres", password: String? = nil, database: String = "postgres") -> String
  {
    let credentials = password.map { "\(user):\($0)" } ?? user
    return "postgresql://\(credentials)@/\(database)?host=\(directory)&port=\(port)"
  }

  /// Runs `sql` as the superuser on `database`.
  public func superuser(_ sql: String, database: String = "postgres") throws {
    let connection = try PostgresConnection(PostgresConfiguration(url: url(database: database)))
    defer { connection.close() }
    try connection.execute(sql, purpose: "set up the test server")
  }

  /// A fresh name: `prefix`, this process's ID and a number unique in the process, so unique on
  /// the server whichever processes and instances make names on it.
  public func uniqueName(_ prefix: String) -> String {
    let number = Self.names.withLock { value -> Int in
      value += 1
      return value
    }
    return "\(prefix)_\(getpid())_\(number)"
  }

  /// Creates a login role with `password` (names and passwords here are the test's own
  /// constants of `[a-z0-9_]`, quoted as identifiers and literals all the same).
  @discardableResult
  public func createRole(_ name: String, password: String) throws -> String {
    try superuser("CREATE ROLE \(quoteIdentifier(name)) LOGIN PASSWORD \(quoteLiteral(password))")
    return name
  }

  /// Creates a database owned by a new role (returned with its password), the role that runs
  /// `eventlog remote init` on it.
  public func createDatabase() throws -> (database: String, owner: String, password: String) {
    let database = uniqueName("db")
    let owner = uniqueName("owner")
    let password = "pw" + UUID().uuidString.prefix(8).lowercased()
    try createRole(owner, password: password)
    try superuser("CREATE DATABASE \(quoteIdentifier(database)) OWNER \(quoteIdentifier(owner))")
    // As on Supabase: the database's owner is not a superuser; other roles connect but cannot
    // create objects in `public`.
    try superuser("REVOKE CREATE ON SCHEMA public FROM PUBLIC", database: database)
    return (database, owner, password)
  }

  private func quoteIdentifier(_ text: String) -> String {
    "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
  }
  private func quoteLiteral(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
  }

  // MARK: Processes

  private var asServerUser: [String] { getuid() == 0 ? ["/usr/sbin/runuser", "-u", "postgres", "--"] : [] }

  private func run(_ tool: String, _ arguments: [String]) throws {
    let command = asServerUser + ["\(binDirectory)/\(tool)"] + arguments
    let output = "\(directory)/\(tool).out"
    let status = try spawn(command, output: output, wait: true)
    guard status == 0 else {
      let out = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
      let log = (try? String(contentsOfFile: "\(directory)/server.log", encoding: .utf8)) ?? ""
      throw ServerFailure(
        "\(tool) failed (status \(status)): \(out)\nserver log (tail): \(log.suffix(2_000))")
    }
  }

  private func writeAsServerUser(_ text: String, to path: String) throws {
    try text.write(toFile: path, atomically: false, encoding: .utf8)
    if getuid() == 0, let user = getpwnam("postgres") {
      _ = chown(path, user.pointee.pw_uid, user.pointee.pw_gid)
    }
  }

  /// A shell that waits for this process to end, then stops the server and removes its files.
  private func startWatchdog() {
    let stop =
      (asServerUser + ["\(binDirectory)/pg_ctl", "-D", "\(directory)/data", "-m", "immediate", "stop"])
      .map { "'\($0)'" }.joined(separator: " ")
    let script = """
      while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done
      \(stop) >/dev/null 2>&1
      rm -rf '\(directory)'
      """
    _ = try? spawn(["/bin/sh", "-c", script], output: "/dev/null", wait: false)
  }
}

/// The server could not be set up.
public struct ServerFailure: Error, CustomStringConvertible {
  /// What failed: the missing server or user, or a tool's status, output and the server log's tail.
  public var description: String
  /// Creates the failure with what failed.
  public init(_ description: String) { self.description = description }
}

/// Starts `command` with standard input from `/dev/null`, output and errors to `output`, and
/// every other descriptor closed (by a `bash` in between), then waits for it (`wait`) and returns its exit status.
///
/// Not Foundation's `Process`: it detects a child's end through a socket the child inherits, so
/// a daemon started by the child (the postmaster that `pg_ctl start` leaves running) kept
/// `waitUntilExit` waiting for as long as the server ran, and so did any other process's wait
/// whose socket the daemon happened to inherit. Closing every descriptor above 2 in the child
/// keeps the server from holding anything of this process's.
private func spawn(_ command: [String], output: String, wait: Bool) throws -> Int32 {
  var actions = posix_spawn_file_actions_t()
  posix_spawn_file_actions_init(&actions)
  defer { posix_spawn_file_actions_destroy(&actions) }
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
  posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
  posix_spawn_file_actions_adddup2(&actions, 1, 2)
  var environment = ProcessInfo.processInfo.environment
  environment["LC_ALL"] = "C"
  // bash closes every inherited descriptor above 2, then becomes the command (glibc's
  // posix_spawn_file_actions_addclosefrom_np is not visible to Swift).
  let closeAndRun = """
    for fd in /proc/$$/fd/*; do fd=${fd##*/}; if [ "$fd" -gt 2 ]; then eval "exec $fd>&-"; fi; done 2>/dev/null
    exec "$@"
    """
  let argv = (["/bin/bash", "-c", closeAndRun, "spawn"] + command).map { strdup($0) } + [nil]
  let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
  defer {
    argv.forEach { free($0) }
    envp.forEach { free($0) }
  }
  var pid: pid_t = 0
  let result = posix_spawn(&pid, "/bin/bash", &actions, nil, argv, envp)
  guard result == 0 else { throw ServerFailure("cannot start \(command[0]) (error \(result))") }
  guard wait else { return 0 }
  var status: Int32 = 0
  while waitpid(pid, &status, 0) < 0 {
    guard errno == EINTR else { throw ServerFailure("waitpid for \(command[0]) failed (errno \(errno))") }
  }
  // WIFEXITED / WEXITSTATUS, which Swift does not import (they are macros).
  return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
}

private func chmodOrThrow(_ path: String, _ mode: mode_t) throws {
  guard chmod(path, mode) == 0 else { throw ServerFailure("chmod \(path) failed (errno \(errno))") }
}
